import type { KnownTools } from './known-tools.js';

// The contract of a tool-call format: how one family of models writes its calls as text (Hermes'
// `<tool_call>{…}</tool_call>`, gpt-oss's Harmony headers, Qwen3-Coder's XML…). A format is two
// functions, like a vLLM tool parser or an Ollama parser: `detect` looks for its markers with a
// plain string search (it runs on every message, most of which hold no call), and `parse` reads
// every call of the format in the text, saying where each one sits. Formats run in registry
// order; once one has read a stretch of text, the formats after it see that stretch as spaces, so
// the arguments of a Harmony call are never read again as a bare JSON call.
//
// Never silent: where `parse` finds the format's marker but cannot read a call, it reports a
// problem at that place instead of returning nothing.
//
// The text returned beside the calls (`content`) is the text with every call taken out, and with
// it every claim that holds a call (a Kimi-K2 section, a fence around a JSON call) and every claim
// marked `hide` (a format's own layout, such as Harmony's channel headers). A call whose closing
// tag may still follow while streaming (a wrapper opened before it) is reported, with `pending` at
// its start: the stream reads it again and takes the span that includes the tag.
//
// What every format's parse ends with is here too, in one place (the bottom of this file): the
// lists it collects into, a call and an argument set on it, and the result it returns.

/** A stretch of the text: [start, end) in UTF-16 code units, as `String.prototype.slice` counts. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** A stretch a format claims. */
export interface Claim extends Span {
  /**
   * The block is complete (its closing token came, or it is a whole object): later text cannot
   * change it, so a stream need not read it again. Left out, it may still grow.
   */
  readonly closed?: boolean;
  /**
   * Only on a claim still open, while streaming: a place inside it (past the calls it holds so far)
   * from which the format reads on when told its text starts inside this block (`context.inside`).
   * A stream settles there instead of reading the whole block again at its next trigger.
   */
  readonly resume?: number;
  /**
   * The stretch is the format's own layout, not text for the user (Harmony's channel headers and
   * reasoning channel, Command R's response tags): it is taken out of the content like a call.
   */
  readonly hide?: boolean;
}

export interface FoundCall extends Span {
  readonly name: string;
  /** An object, or JSON text (read leniently; text that is not an object becomes an INVALID_ARGUMENTS problem). */
  readonly arguments: Record<string, unknown> | string;
  /** The model's own id for the call, when the format carries one (Kimi-K2's `functions.NAME:0`). */
  readonly id?: string;
}

export interface FoundProblem extends Span {
  /** What was expected and what was there ("no JSON arguments after the Harmony header"). */
  readonly message: string;
  readonly name?: string;
  readonly id?: string;
  /** UNREADABLE_CALL (the default) or INVALID_ARGUMENTS (a name was read, its arguments were not). */
  readonly code?: 'UNREADABLE_CALL' | 'INVALID_ARGUMENTS';
  /** The text to show (the span's text when left out). */
  readonly raw?: string;
}

export interface FormatResult {
  readonly calls: readonly FoundCall[];
  readonly problems?: readonly FoundProblem[];
  /** Text that belongs to the format without being a call (Harmony's analysis channel): hidden from later formats. */
  readonly claims?: readonly Claim[];
  /** Only when `context.partial`: where a call starts that the text so far does not finish. */
  readonly pending?: number;
}

export interface FormatContext {
  /**
   * True while streaming: the text may still grow. Report only calls whose end is certain, and
   * set `pending` to where an unfinished one starts (nothing before it is read again).
   */
  readonly partial: boolean;
  /**
   * True when nothing but spaces (or hidden reasoning) comes before this text in the message.
   * Formats without a marker (a Llama 3.2 call list) only count at the start of a message.
   */
  readonly atMessageStart: boolean;
  /**
   * True when the text starts inside a block this format claimed with a `resume` place in the text
   * before it (a stream settled there): read on as if the block's opening token came just before.
   */
  readonly inside?: boolean;
  /** The tools the model was offered, when the caller passed them. */
  readonly tools: KnownTools | undefined;
  /**
   * A value written as text (XML-style formats) typed by the tool's parameter schema, when the
   * tools are known: `"2"` → 2 for an integer, JSON for an object or array; the text otherwise.
   */
  value(tool: string, parameter: string, text: string): unknown;
}

export interface ToolCallFormat {
  /** Unique: what `formats: [...]` and problems' `format` name it by (`hermes`, `harmony`, `qwen3-coder`…). */
  readonly name: string;
  /** Who writes it, for listings: "gpt-oss (Harmony)". */
  readonly models: string;
  /**
   * Characters of which a text must hold at least one for this format to find anything in it (the
   * first character of its markers: `<` for `<tool_call>`). Every format's characters are looked
   * for once per text, each with one native search, and only the formats whose characters are
   * there are asked to detect: most messages hold no `<`, `[` or `▁`, and searching a CJK text for
   * a whole marker costs some twenty times a search for one character. Without it, a format is
   * always asked (the Llama call list and Functionary's first recipient need no marker).
   */
  readonly markers?: string;
  /** The position of the format's first marker in `text`, or -1. A plain search: never parse here. */
  detect(text: string): number;
  /** Every call of the format in `text`, with where it sits; problems where a marker holds no readable call. */
  parse(text: string, context: FormatContext): FormatResult;
}

/** Calls and problems as a format collects them, in text order. */
export interface Found {
  readonly calls: FoundCall[];
  readonly problems: FoundProblem[];
}

export function newFound(): Found {
  return { calls: [], problems: [] };
}

// Results, calls and problems are built field by field, `id` and `pending` only when set: spreading
// a span or a conditional object into a literal cost about a microsecond each (most of a streamed
// read of a Mistral call, measured with --cpu-prof).

/** What a format returns, with `pending` and `claims` only when there are any. */
export function formatResult(calls: readonly FoundCall[], problems: readonly FoundProblem[], pending: number | undefined, claims?: readonly Claim[]): FormatResult {
  if (claims === undefined) return pending === undefined ? { calls, problems } : { calls, problems, pending };
  return pending === undefined ? { calls, problems, claims } : { calls, problems, claims, pending };
}

/** A call found at `span`. */
export function foundCall(span: Span, name: string, args: Record<string, unknown> | string, id?: string): FoundCall {
  return id === undefined ? { start: span.start, end: span.end, name, arguments: args } : { start: span.start, end: span.end, name, arguments: args, id };
}

