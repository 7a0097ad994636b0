import type { Readable, Writable } from 'node:stream';

/** What a command may touch of the outside world; tests pass their own streams. */
export interface CliIO {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable & { isTTY?: boolean };
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Options every command takes (SPEC §5), resolved against the working directory. */
export interface GlobalOptions {
  readonly chains: string;
  readonly plugins: string;
  readonly debug: boolean;
}

/** Exit codes of SPEC §5. */
export const EXIT_OK = 0;
export const EXIT_RUN_FAILED = 1;
export const EXIT_USAGE = 2;
