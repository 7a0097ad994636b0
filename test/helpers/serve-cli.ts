import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO } from './run-cli.js';

// `toolchain serve` started the way a user starts it: `node bin/toolchain.js serve --port 0` (the
// built CLI bundle), its address read from what it prints.

const BIN = join(REPO, 'bin', 'toolchain.js');

export interface ServeProcess {
  /** The base URL, without a trailing slash. */
  readonly url: string;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface ServeSpec {
  readonly cwd: string;
  /** Arguments before `serve` (--chains, --plugins). */
  readonly globals?: readonly string[];
  /** Arguments after `serve --port 0`. */
  readonly args?: readonly string[];
  readonly env?: Record<string, string>;
}

export function startServe(spec: ServeSpec): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, ...(spec.globals ?? []), 'serve', '--port', '0', ...(spec.args ?? [])], { cwd: spec.cwd, env: { ...process.env, ...spec.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /inspector at (http:\/\/[^\s/]+)\//.exec(err);
      if (m) {
        resolve({
          url: m[1]!,
          pid: child.pid!,
          stdout: () => out,
          stderr: () => err,
          stop: () => (child.exitCode === null && child.signalCode === null && child.kill('SIGTERM'), exited),
        });
      }
    });
    void exited.then((code) => reject(new Error(`toolchain serve exited (${code}) before it listened:\n${err}`)));
  });
}
