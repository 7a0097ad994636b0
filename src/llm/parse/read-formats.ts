import type { FormatContext, FormatResult, FoundCall, FoundProblem, Span, ToolCallFormat } from './format.js';
import type { KnownTools } from './known-tools.js';
import { MarkerChars } from './marker-chars.js';
import { maskReasoning, maskSpans } from './mask-spans.js';
import { valueTyper } from './type-value.js';

// Runs formats over one text, in order. Reasoning is hidden first; then each format whose
// markers are present parses what is still visible, and whatever it read (calls, problems, its
// claims, and while streaming the unfinished rest) is hidden from the formats after it. A format
// that throws is a problem of its own, never an exception for the caller.

export interface ReadCall extends FoundCall {
  readonly format: string;
}

export interface ReadProblem extends FoundProblem {
  readonly format: string;
}

export interface FormatsRead {
  /** In text order. */
  readonly calls: readonly ReadCall[];
  readonly problems: readonly ReadProblem[];
  /** Everything formats read or claimed (calls, problems, claims, the unfinished rest): where a stream may not settle. */
  readonly spans: readonly Span[];
  /** The claims that are complete (`closed`): a stream may settle past them as past a call. */
  readonly closed: readonly Span[];
  /** Every claim, with its format: what the content leaves out around the calls (call-content.ts). */
  readonly claims: readonly ReadClaim[];
  /** While streaming: where the earliest unfinished construct starts. */
  readonly pending: number | undefined;
  /** While streaming: the open claims that name a place to read on from (`resume`), with their format. */
  readonly resumes: readonly Resumable[];
}

/** A claim as the content needs it: whether it is finished, whether it is layout, whose it is. */
export interface ReadClaim extends Span {
  readonly closed: boolean;
  readonly hide: boolean;
  readonly format: string;
}

/** An open claim a stream may settle inside of, at `at`, telling `format` its text starts inside the block. */
export interface Resumable extends Span {
  readonly at: number;
  readonly format: string;
}

export interface ReadSettings {
  readonly partial: boolean;
  readonly atMessageStart: boolean;
  readonly tools: KnownTools | undefined;
  /** The format whose open block the text starts inside (a stream settled at its `resume`). */
  readonly inside?: string;
}

const byStart = (a: Span, b: Span): number => a.start - b.start;

function clamp(span: Span, length: number): Span {
  const start = Number.isFinite(span.start) ? Math.max(0, Math.min(length, Math.trunc(span.start))) : 0;
  const end = Number.isFinite(span.end) ? Math.max(start, Math.min(length, Math.trunc(span.end))) : start;
  return { start, end };
}

/** Field by field, like every object built on this path: spreading one cost about a microsecond. */
function insideContext(context: FormatContext): FormatContext {
  return { partial: context.partial, atMessageStart: context.atMessageStart, tools: context.tools, value: context.value, inside: true };
}

export function readFormats(text: string, formats: readonly ToolCallFormat[], settings: ReadSettings): FormatsRead {
  const masked = maskReasoning(text, settings.partial);
  let visible = masked.text;
  let pending = masked.pending;
  const context: FormatContext = { partial: settings.partial, atMessageStart: settings.atMessageStart, tools: settings.tools, value: valueTyper(settings.tools) };
  const calls: ReadCall[] = [];
  const problems: ReadProblem[] = [];
  const spans: Span[] = [];
  const closed: Span[] = [];
  const claims: ReadClaim[] = [];
  const resumes: Resumable[] = [];
  // Looked for in the text as it is before any format reads it: hiding a stretch only removes characters.
  const markers = new MarkerChars(visible, formats);
  for (let index = 0; index < formats.length; index++) {
    const format = formats[index]!;
    // The block the text starts inside was found by its opening token, which is no longer in the text.
    // Asked only when there is one: each format object has a shape of its own, and reading a field of twenty such costs a read more than its searches.
    const inside = settings.inside !== undefined && format.name === settings.inside;
    let result: FormatResult;
    try {
      if (!inside && (!markers.any(index) || format.detect(visible) < 0)) continue;
      result = format.parse(visible, inside ? insideContext(context) : context);
    } catch (error) {
      problems.push({ start: 0, end: text.length, format: format.name, message: `the '${format.name}' format failed: ${(error as Error)?.message ?? String(error)}` });
      continue;
    }
    const before = spans.length;
    for (const call of result.calls ?? []) {
      const span = clamp(call, text.length);
      // Field by field: spreading the format's object into a new one cost a microsecond a call.
      const { name, arguments: args, id } = call;
      calls.push(id === undefined ? { start: span.start, end: span.end, name, arguments: args, format: format.name } : { start: span.start, end: span.end, name, arguments: args, id, format: format.name });
      spans.push(span);
    }
    for (const p of result.problems ?? []) {
      const span = clamp(p, text.length);
      problems.push({ ...p, ...span, format: format.name });
      spans.push(span);
    }
    for (const claim of result.claims ?? []) {
      const span = clamp(claim, text.length);
      spans.push(span);
      claims.push({ start: span.start, end: span.end, closed: claim.closed === true, hide: claim.hide === true, format: format.name });
      if (claim.closed === true) closed.push(span);
      else if (settings.partial && typeof claim.resume === 'number' && claim.resume > span.start && claim.resume <= span.end) resumes.push({ start: span.start, end: span.end, at: Math.trunc(claim.resume), format: format.name });
    }
    if (settings.partial && typeof result.pending === 'number' && result.pending >= 0) {
      const at = clamp({ start: result.pending, end: text.length }, text.length);
      pending = Math.min(pending ?? at.start, at.start);
      spans.push(at);
    }
    // Hidden from the formats after this one: after the last (the catch-all json), no one would look.
    if (spans.length > before && index < formats.length - 1) visible = maskSpans(visible, spans.slice(before));
  }
  // Most reads find one call or none: nothing to sort then.
  if (calls.length > 1) calls.sort(byStart);
  if (problems.length > 1) problems.sort(byStart);
  return { calls, problems, spans, closed, claims, pending, resumes };
}
