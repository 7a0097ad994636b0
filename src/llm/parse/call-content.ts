import type { Span } from './format.js';
import type { FormatsRead, ReadClaim } from './read-formats.js';
import type { PendingCall } from './types.js';

// The text returned beside the calls, as every inference server returns it (`content` beside
// `tool_calls`): the model's text with the calls taken out. A call goes with what wraps it — a
// claim holding a call (a Kimi-K2 or DeepSeek section, a fence around a JSON call) is cut whole —
// and a format's own layout (claims marked `hide`: Harmony's channel headers) goes too. What is
// left is trimmed at both ends, and is null when nothing is left. A text with nothing taken out is
// returned as it is. Problems are not taken out: text that could not be read as a call stays
// content, as servers leave it when their parser fails.
//
// Used by parseToolCalls, by the stream's end() (which sees its claims a read at a time, so a
// block that grew across reads arrives in pieces: mergeClaims joins them) and by the agent step.

/** Where the content of one parse comes from. */
export type ContentSource =
  /** Text read for calls: the calls kept once names are checked are cut out of it. */
  | { readonly text: string; readonly read: FormatsRead }
  /** Text that came beside structured calls (an API's own tool_calls): returned as it is. */
  | { readonly text: string | null; readonly read?: undefined }
  | undefined;

/** `text` less `calls`, the claims holding one of them, and the claims marked `hide`; see above. */
export function textWithoutCalls(text: string, calls: readonly Span[], claims: readonly ReadClaim[]): string | null {
  const cut: Span[] = [...calls];
  for (const claim of claims) {
    if (claim.hide || calls.some((c) => c.start >= claim.start && c.end <= claim.end)) cut.push(claim);
  }
  if (cut.length === 0) return text;
  cut.sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  for (const { start, end } of cut) {
    if (start > pos) out += text.slice(pos, start);
    pos = Math.max(pos, end);
  }
  out = (out + text.slice(pos)).trim();
  return out === '' ? null : out;
}

/** The content of a parse, once `kept` holds the calls that survived the name check. */
export function contentOf(source: ContentSource, kept: readonly PendingCall[]): string | null {
  if (source === undefined) return null;
  if (source.read === undefined) return source.text;
  const at = new Set(kept.map((c) => c.at));
  return textWithoutCalls(source.text, source.read.calls.filter((c) => at.has(c.start)), source.read.claims);
}

/**
 * One format's claims, collected read by read while streaming, as one read of the whole text
 * would give them: an open piece and the pieces that overlap it or start where it ends are one
 * block (a Kimi-K2 section read on from inside). Finished claims that merely touch stay apart.
 */
export function mergeClaims(claims: readonly ReadClaim[]): ReadClaim[] {
  const sorted = [...claims].sort((a, b) => (a.format < b.format ? -1 : a.format > b.format ? 1 : a.start - b.start));
  const out: ReadClaim[] = [];
  for (const claim of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && last.format === claim.format && last.hide === claim.hide && (claim.start < last.end || (claim.start === last.end && !last.closed))) {
      // The block is finished as its last piece is: a finished claim nested in an open one leaves it open.
      const closed = claim.end > last.end ? claim.closed : claim.end === last.end ? last.closed && claim.closed : last.closed;
      out[out.length - 1] = { start: last.start, end: Math.max(last.end, claim.end), closed, hide: last.hide, format: last.format };
    } else {
      out.push(claim);
    }
  }
  return out;
}
