import { type Claim, type FormatContext, formatResult, type FormatResult, newFound, type Span, type ToolCallFormat } from '../format.js';
import { scanJson, type JsonScan } from '../scan-json.js';

// The catch-all, always last: JSON calls anywhere in the text — bare objects in prose
// (`{"name": "get_weather", "arguments": {…}}`, the `tool`/`args`/`parameters`/`input` variants,
// OpenAI- and Anthropic-shaped objects pasted as text) and fenced ```json blocks. This is how
// Llama 3.x answers without <|python_tag|> (`{"name": …, "parameters": {…}}`), how xLAM and
// Gemma's JSON prompt answer, and how most prompted models write. What the formats before it
// have read is hidden from it, so it never reads a format's arguments as a call of their own.
// Source: Meta, "Llama 3.1 prompt format" (JSON based tool calling); Salesforce xLAM model card;
// Google, "Function calling with Gemma".

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const st: JsonScan = { text, out: found, tools: context.tools, partial: context.partial, pending: undefined, claims: [], inside: context.inside === true };
  scanJson(st, 0, text.length, false);
  let pending = callLists(text, found.calls, st.claims!, context.partial);
  if (st.pending !== undefined) {
    // An object still open that opens a list: the list may be one of calls, its `[` unfinished too.
    let open = st.pending - 1;
    while (open >= 0 && isSpace(text[open])) open--;
    const at = text[open] === '[' ? open : st.pending;
    pending = Math.min(pending ?? at, at);
  }
  return formatResult(found.calls, found.problems, pending, st.claims);
}

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\n' || c === '\r' || c === '\t';
}

/**
 * A JSON list whose items are all calls (`[{"name": …}, {"name": …}]`, as xLAM and Llama 3.2
 * write them) is claimed whole, so the content leaves out its brackets and commas with the calls.
 * While streaming, a list not closed yet is where the text is unfinished (returned): its `]` may
 * still come, and the claim holds the brackets only once it has.
 */
function callLists(text: string, calls: readonly Span[], claims: Claim[], partial: boolean): number | undefined {
  let pending: number | undefined;
  for (let i = 0; i < calls.length; i++) {
    let open = calls[i]!.start - 1;
    while (open >= 0 && isSpace(text[open])) open--;
    if (text[open] !== '[') {
      i = callRun(text, calls, i, claims, partial, (at) => (pending = Math.min(pending ?? at, at)));
      continue;
    }
    let pos = calls[i]!.end;
    for (;;) {
      while (pos < text.length && isSpace(text[pos])) pos++;
      if (text[pos] === ']') {
        claims.push({ start: open, end: pos + 1, closed: true });
        break;
      }
      if (pos >= text.length) {
        if (partial) pending = Math.min(pending ?? open, open);
        break;
      }
      if (text[pos] !== ',') break;
      pos++;
      while (pos < text.length && isSpace(text[pos])) pos++;
      const next = calls[i + 1];
      if (next === undefined || next.start !== pos) {
        // While streaming, the next item may be a call still being written.
        if (partial && (pos >= text.length || (text[pos] === '{' && next === undefined))) pending = Math.min(pending ?? open, open);
        break;
      }
      i++;
      pos = next.end;
    }
  }
  return pending;
}

/**
 * Calls one after another with `;` or `,` between them (`{…}; {…}`, as Llama 3 separates its
 * calls without <|python_tag|>) are claimed as one run, so the content leaves out the separators
 * with the calls. Returns the index of the run's last call. While streaming, a call with nothing
 * after it yet, or a separator, may be followed by another: the run's start is unfinished then.
 */
function callRun(text: string, calls: readonly Span[], first: number, claims: Claim[], partial: boolean, unfinished: (at: number) => void): number {
  let last = first;
  for (;;) {
    let pos = calls[last]!.end;
    while (pos < text.length && isSpace(text[pos])) pos++;
    const separated = text[pos] === ';' || text[pos] === ',';
    if (separated) pos++;
    while (pos < text.length && isSpace(text[pos])) pos++;
    const next = calls[last + 1];
    if (separated && next !== undefined && next.start === pos) {
      last++;
      continue;
    }
    if (partial && (pos >= text.length || (separated && text[pos] === '{' && next === undefined))) unfinished(calls[first]!.start);
    break;
  }
  if (last > first) claims.push({ start: calls[first]!.start, end: calls[last]!.end, closed: true });
  return last;
}

export const json: ToolCallFormat = {
  name: 'json',
  models: 'any model writing JSON calls in prose or fenced blocks (Llama 3.x, xLAM, Gemma, prompted models)',
  // A fence too: one around a call another format read goes with the call (its claim holds the call).
  markers: '{\uff5b`',
  detect: (text) => {
    const brace = text.indexOf('{');
    if (brace >= 0) return brace;
    const wide = text.indexOf('\uff5b');
    return wide >= 0 ? wide : text.indexOf('```');
  },
  parse,
};
