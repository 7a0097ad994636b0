import type { Readable, Writable } from 'node:stream';
import { ERROR_KINDS, isErrorCode, type FailureCode } from '../common/errors.js';

/** What a command may touch of the outside world; tests pass their own streams. */
export interface CliIO {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable & { isTTY?: boolean };
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Options every command takes, resolved against the working directory. */
export interface GlobalOptions {
  readonly chains: string;
  readonly plugins: string;
  readonly debug: boolean;
}

/** Exit codes of the CLI. */
export const EXIT_OK = 0;
export const EXIT_RUN_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_CANCELLED = 130;

/** The exit code for a failure, decided by its code alone (common/errors.ts says what kind each is). */
export function exitCodeFor(code: FailureCode): number {
  // A handler's own code means the tool was called and failed: the run failed.
  if (!isErrorCode(code)) return EXIT_RUN_FAILED;
  switch (ERROR_KINDS[code]) {
    case 'definition':
    case 'usage':
      return EXIT_USAGE;
    case 'cancelled':
      return EXIT_CANCELLED;
    case 'run':
      return EXIT_RUN_FAILED;
  }
}
