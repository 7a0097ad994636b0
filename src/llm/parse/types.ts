import type { KnownTools } from './known-tools.js';

// What the tool-call parsers return. A parser never throws for what a model wrote:
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

/**
 * Why something is a problem rather than a call:
 * - UNREADABLE_CALL: a format's marker or a call-like object was found, but no call could be read from it
 * - INVALID_ARGUMENTS: the call names a tool, but its arguments are not a JSON object
 * - UNKNOWN_TOOL: `tools` were given and the name is not one of them (see `suggestions`)
 * - NOT_MODEL_OUTPUT: the input is not text, a message, a response or stream chunks
 */
export type ParseProblemCode = 'UNREADABLE_CALL' | 'INVALID_ARGUMENTS' | 'UNKNOWN_TOOL' | 'NOT_MODEL_OUTPUT';

/** Something that looked like a call but could not be read. */
export interface ParseProblem {
  readonly code: ParseProblemCode;
  readonly message: string;
  /** The text as the model wrote it (capped at RAW_LIMIT characters). */
  readonly raw: string;
  /** The call's id, when the model gave one: an API still expects an answer to that id. */
  readonly id?: string;
  /** The tool's name, when it could be read. */
  readonly name?: string;
  /** The format it was written in (`hermes`, `harmony`, … `json` for a bare object; `openai` for structured calls). */
  readonly format?: string;
  /** Where it starts: a character offset into the text (a message's text content). */
  readonly at?: number;
  /** For UNKNOWN_TOOL: the offered names closest to `name`. */
  readonly suggestions?: readonly string[];
}

export interface ParseResult {
  readonly calls: ToolCall[];
  readonly problems: ParseProblem[];
  /**
   * The text beside the calls, as inference servers return `content` beside `tool_calls`: the
   * model's text with the calls taken out (and what wraps them: tags, sections, fences), trimmed,
   * null when nothing else was said. A text with no call taken out is returned as it is; text that
   * could not be read as a call stays. For a message with structured calls, its text as it is.
   */
  readonly content: string | null;
}

/** A call before ids are assigned and names are checked. */
export interface PendingCall {
  readonly id: string | undefined;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  readonly format?: string;
  readonly at?: number;
}

/** Where parsers put what they find, in the order they find it, and what they know of the offered tools. */
export interface CallSink {
  readonly calls: PendingCall[];
  readonly problems: ParseProblem[];
  readonly tools?: KnownTools | undefined;
}

/** Raw text kept in a problem; a runaway model output must not be copied whole into every report. */
export const RAW_LIMIT = 4000;

export interface ProblemDetails {
  readonly id?: string | undefined;
  readonly name?: string | undefined;
  readonly format?: string | undefined;
  readonly at?: number | undefined;
  readonly suggestions?: readonly string[] | undefined;
}

export function problem(code: ParseProblemCode, message: string, raw: string, extra: ProblemDetails = {}): ParseProblem {
  return {
    code,
    message,
    raw: raw.length > RAW_LIMIT ? `${raw.slice(0, RAW_LIMIT)}…` : raw,
    ...(extra.id !== undefined ? { id: extra.id } : {}),
    ...(extra.name !== undefined ? { name: extra.name } : {}),
    ...(extra.format !== undefined ? { format: extra.format } : {}),
    ...(extra.at !== undefined ? { at: extra.at } : {}),
    ...(extra.suggestions !== undefined ? { suggestions: extra.suggestions } : {}),
  };
}

export function newSink(tools?: KnownTools): CallSink {
  return { calls: [], problems: [], tools };
}
