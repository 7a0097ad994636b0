// How a run event's outcome is classified, the same way by the metrics and the run views.

/** Codes of failures that happen before the tool is called: they are no tool call. */
export const NOT_CALLED: ReadonlySet<string> = new Set(['VALIDATION_FAILED', 'APPROVAL_DENIED', 'TOOL_NOT_FOUND', 'INPUT_INVALID']);

/** A run stopped by its caller (not by a failing step) ended as `cancelled`. */
export function isCancellation(error: { readonly code: string; readonly step?: string } | undefined): boolean {
  return error !== undefined && error.code === 'ABORTED' && error.step === undefined;
}
