import { ToolchainError, type ErrorCode } from '../common/errors.js';

// Every driver turns what its database library throws into one of the STORE_* codes, with a
// message that names the store (its URL without credentials), what was being done, and the cause
// in the library's own words: "sqlite:.toolchain/runs.db: cannot record step results: database or
// disk is full (SQLITE_FULL)".

export type StoreErrorCode = Extract<ErrorCode, `STORE_${string}`>;

export function storeError(code: StoreErrorCode, url: string, doing: string, cause?: unknown): ToolchainError {
  const why = cause === undefined ? '' : `: ${causeText(cause)}`;
  const error = new ToolchainError(code, `${url}: ${doing}${why}`);
  if (cause !== undefined) (error as { cause?: unknown }).cause = cause; // kept for --debug, never shown as is
  return error;
}

/** The cause in one line: the library's message and, when it has one, its code. */
export function causeText(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as { code?: unknown }).code;
  const message = cause.message.split('\n')[0] ?? '';
  if (message === '' && typeof code === 'string') return code;
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

/** Already one of ours (a STORE_* code, or USAGE for a bad argument): passed on unchanged by the drivers' error mapping. */
export function isOwnError(error: unknown): error is ToolchainError {
  return error instanceof ToolchainError;
}

/** The store was written by a newer toolchain: its schema version is past the last one we know. */
export function tooNew(url: string, version: number, known: number): ToolchainError {
  return new ToolchainError(
    'STORE_TOO_NEW',
    `${url} was written by a newer toolchain (store schema version ${version}; this one knows versions up to ${known}): upgrade toolchain, or use another store`,
  );
}
