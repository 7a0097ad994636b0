import { type Claim, type FormatContext, formatResult, type FormatResult, newFound, type ToolCallFormat } from '../format.js';
import { addJsonCalls, readJsonValue } from '../json-calls.js';
import { Seeker } from './special-tokens.js';
import { tagMayFollow } from './xml-tags.js';

// Formats that are "a marker, then JSON calls" — the same reading, different tokens. Each is a
// row: the marker, the token that may close the block, and where the layout is documented.
// One or more JSON values may follow the marker (Llama 3.1 separates calls with `;`); each value
// is a call, a list of calls or a wrapper, read by call-shape.ts with a name alone enough.

interface MarkedJson {
  readonly name: string;
  readonly models: string;
  readonly open: string;
  /** The JSON starts with the marker's last character (`functools[`). */
  readonly jsonInMarker?: boolean;
  readonly close: readonly string[];
  /** What else may follow the marker without being this format's (Llama 3.1's python_tag also leads Python calls). */
  readonly notMine?: RegExp;
  /** Tokens of the format's layout around its text (Command R's <|START_RESPONSE|>): taken out of the content. */
  readonly layout?: readonly string[];
}

function markedJson(spec: MarkedJson): ToolCallFormat {
  const parse = (text: string, context: FormatContext): FormatResult => {
    const found = newFound();
    let pending: number | undefined;
    const opens = new Seeker(text, spec.open);
    for (let marker = opens.find(0); marker !== undefined; marker = opens.find(marker.end)) {
      const at = marker.at;
      // A block's JSON ends before the next marker: an unclosed one never makes the search run to the end again.
      const limit = opens.find(marker.end)?.at ?? text.length;
      let pos = at + spec.open.length - (spec.jsonInMarker ? 1 : 0);
      const rest = text.slice(pos, pos + 64);
      if (spec.notMine?.test(rest)) continue;
      if (!/^\s*[[{\uff5b]/.test(rest)) {
        if (context.partial && rest.trim() === '') pending = Math.min(pending ?? at, at);
        else found.problems.push({ start: at, end: Math.min(text.length, pos + 64), message: `no JSON call after ${spec.open} (${spec.models})` });
        continue;
      }
      let first = true;
      let from = at;
      for (;;) {
        const value = readJsonValue(text, pos, context.partial && limit === text.length, limit);
        if (value.ok === 'open') {
          pending = Math.min(pending ?? at, at);
          break;
        }
        const closing = new RegExp(`^\\s*(?:${spec.close.map((c) => c.replace(/[|[\]]/g, '\\$&')).join('|') || '(?!)'})`).exec(text.slice(value.end, value.end + 32));
        // A value after the first takes the separator before it (the content leaves out neither).
        const span = { start: first ? at : from, end: value.end + (closing?.[0].length ?? 0) };
        if (!value.ok) found.problems.push({ start: span.start, end: span.end, message: `the JSON after ${spec.open} is not valid: ${value.error}` });
        else if (addJsonCalls(value.value, true, span, context.tools, found) === 0) found.problems.push({ start: span.start, end: span.end, message: `the JSON after ${spec.open} holds no call (expected {"name": …, "arguments": {…}})` });
        first = false;
        // Several calls are separated by `;` (Llama 3.1) or `,`; while streaming, one may still come, or the closing token.
        const after = text.slice(value.end, value.end + 16);
        const more = /^\s*[;,]\s*(?=[[{])/.exec(after);
        if (context.partial && closing === null && value.ok && (/^\s*[;,]?\s*$/.test(after) ? value.end + 16 > text.length : tagMayFollow(text, value.end))) pending = Math.min(pending ?? at, at);
        if (closing !== null || more === null || !value.ok) break;
        from = value.end;
        pos = value.end + more[0].length;
      }
    }
    if (spec.layout === undefined) return formatResult(found.calls, found.problems, pending);
    const claims: Claim[] = [];
    for (const token of spec.layout) for (let at = text.indexOf(token); at >= 0; at = text.indexOf(token, at + token.length)) claims.push({ start: at, end: at + token.length, closed: true, hide: true });
    return formatResult(found.calls, found.problems, pending, claims);
  };
  const tokens = [spec.open, ...(spec.layout ?? [])];
  const detect = (text: string): number => {
    let first = -1;
    for (const token of tokens) {
      const at = text.indexOf(token);
      if (at >= 0 && (first < 0 || at < first)) first = at;
    }
    return first;
  };
  return { name: spec.name, models: spec.models, markers: spec.open.includes('<') ? '<' : '[', detect, parse };
}

/** Llama 3.1 / 3.2 / 3.3 JSON after <|python_tag|>: `<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}`. Source: Meta, "Llama 3.1 prompt format" (JSON based tool calling); vLLM `llama_tool_parser.py`. */
export const llama3Json = markedJson({ name: 'llama3-json', models: 'Llama 3.1 / 3.2 / 3.3 (JSON after <|python_tag|>)', open: '<|python_tag|>', close: ['<|eom_id|>', '<|eot_id|>'], notMine: /^\s*\[?\s*[A-Za-z_]/ });

/** `<|tool_call|>[{"name": …, "arguments": {…}}]`. Source: ibm-granite/granite-3.1-8b-instruct chat template; vLLM `granite_tool_parser.py`. */
export const granite = markedJson({ name: 'granite', models: 'IBM Granite 3.x', open: '<|tool_call|>', close: [] });

/** `<TOOLCALL>[{"name": …, "arguments": {…}}]</TOOLCALL>`. Source: nvidia/Llama-3.3-Nemotron-Super-49B-v1 chat template; llama.cpp `common/chat.cpp` (Nemotron). */
export const nemotron = markedJson({ name: 'nemotron', models: 'NVIDIA Nemotron (Llama-Nemotron)', open: '<TOOLCALL>', close: ['</TOOLCALL>'] });

/** `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": …, "parameters": {…}}]<|END_ACTION|>`; text between <|START_RESPONSE|> and <|END_RESPONSE|>, the tags layout. Source: CohereForAI/c4ai-command-r7b-12-2024 chat template; llama.cpp `common/chat.cpp` (Command R7B). */
export const commandR = markedJson({ name: 'command-r', models: 'Cohere Command R7B / A', open: '<|START_ACTION|>', close: ['<|END_ACTION|>'], layout: ['<|START_RESPONSE|>', '<|END_RESPONSE|>'] });

/** `<|action_start|><|plugin|>\n{"name": …, "parameters": {…}}<|action_end|>`. Source: internlm/internlm2_5-7b-chat chat template; vLLM `internlm2_tool_parser.py`. */
export const internlm = markedJson({ name: 'internlm', models: 'InternLM 2 / 2.5', open: '<|action_start|><|plugin|>', close: ['<|action_end|>'] });

/** `functools[{"name": …, "arguments": {…}}]`. Source: microsoft/Phi-4-mini-instruct model card; vLLM `phi4mini_tool_parser.py`; llama.cpp (FireFunction v2). */
export const functools = markedJson({ name: 'functools', models: 'Phi-4-mini, FireFunction v2', open: 'functools[', jsonInMarker: true, close: [] });
