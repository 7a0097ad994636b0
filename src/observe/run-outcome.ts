// How a run event's outcome is classified, the same way by the metrics and the run views.

/** Codes of failures that happen before the tool is called: they are no tool call. */
export const NOT_CALLED: ReadonlySet<string> = new Set(['VALIDATION_FAILED', 'APPROVAL_DENIED', 'TOOL_NOT_FOUND', 'INPUT_INVALID']);

/** Codes with which a run is refused before it starts (an unknown chain, an input its chain refuses): a refusal, not a run. */
export const REFUSED: ReadonlySet<string> = new Set(['CHAIN_NOT_FOUND', 'INPUT_INVALID']);
