import { type FormatContext, formatResult, type FormatResult, newFound, type ToolCallFormat } from '../format.js';
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
  return formatResult(found.calls, found.problems, st.pending, st.claims);
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
