// How one call ended, before it becomes a message. Failures are values, not exceptions, so one
// call's failure can never reject the batch.

export type CallOutcome =
  | { readonly ok: true; readonly value: unknown; readonly attempts: number }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly attempts: number };

export function failed(error: { readonly code: string; readonly message: string }, attempts: number): CallOutcome {
  return { ok: false, code: error.code, message: error.message, attempts };
}
