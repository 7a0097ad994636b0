// What the tool-call parsers return (SPEC §4). A parser never throws for what a model wrote:
// anything it cannot read becomes a problem carrying the raw text, so a caller can show it to the
// model ("your call to X had broken JSON: …") instead of failing the turn.

/** One call a model asked for. `arguments` is always an object (`{}` when none were given). */
export interface ToolCall {
  /** The model's id (`call_abc123`, `toolu_…`), or `call_1`, `call_2`… in order when it gave none. */
  readonly id: string;
  /** The name as the model wrote it: an exported name (see export/export-names.ts). */
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** Something that looked like a call but could not be read. */
export interface ParseProblem {
  readonly message: string;
  /** The text as the model wrote it (capped at RAW_LIMIT characters). */
  readonly raw: string;
  /** The call's id, when the model gave one: an API still expects an answer to that id. */
  readonly id?: string;
  /** The tool's name, when it could be read. */
  readonly name?: string;
}

export interface ParseResult {
  readonly calls: ToolCall[];
  readonly problems: ParseProblem[];
}

/** A call before ids are assigned. */
export interface PendingCall {
  readonly id: string | undefined;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** Where parsers put what they find, in the order they find it. */
export interface CallSink {
  readonly calls: PendingCall[];
  readonly problems: ParseProblem[];
}

/** Raw text kept in a problem; a runaway model output must not be copied whole into every report. */
export const RAW_LIMIT = 4000;

export function problem(message: string, raw: string, extra: { id?: string | undefined; name?: string | undefined } = {}): ParseProblem {
  return {
    message,
    raw: raw.length > RAW_LIMIT ? `${raw.slice(0, RAW_LIMIT)}…` : raw,
    ...(extra.id !== undefined ? { id: extra.id } : {}),
    ...(extra.name !== undefined ? { name: extra.name } : {}),
  };
}

export function newSink(): CallSink {
  return { calls: [], problems: [] };
}
