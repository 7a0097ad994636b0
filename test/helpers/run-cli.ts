import { execFile } from 'node:child_process';
import { join } from 'node:path';

export const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'bin', 'toolchain.js');

export interface CliOutcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI as a real child process (`npm test` builds dist/ first). */
/** `as`: run as another user (root in CI writes any file; a read-only store needs someone who cannot). */
export function runCli(args: readonly string[], options: { cwd?: string; input?: string; env?: Record<string, string>; as?: { uid: number; gid: number } } = {}): Promise<CliOutcome> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: options.cwd ?? REPO, env: { ...process.env, ...options.env }, maxBuffer: 16 * 1024 * 1024, timeout: 20_000, ...(options.as ?? {}) },
      (error, stdout, stderr) => {
        const code = error && typeof error.code === 'number' ? error.code : error ? 99 : 0;
        resolve({ code, stdout, stderr });
      },
    );
    // A CLI that stops reading early (an input cap) closes the pipe: that is its answer, not an error.
    child.stdin?.on('error', () => undefined);
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

/** A stack trace line, which no user-facing error may print without --debug. */
export const STACK_LINE = /^\s+at .+\(.+:\d+:\d+\)$/m;
