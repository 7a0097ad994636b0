import { type FormatContext, formatResult, type FormatResult, newFound, type ToolCallFormat } from '../format.js';
import { Seeker } from './special-tokens.js';
import { tagValue, waitsForClose, widen, wrapper } from './xml-tags.js';
import { defineOwn } from '../../../common/define-own.js';

// Anthropic's legacy prompt-based tool use (Claude 2.1 / Claude 3 before the tools API), still
// written by models prompted with it: the name and each parameter as their own tags.
//
//   <function_calls>
//   <invoke>
//   <tool_name>get_weather</tool_name>
//   <parameters>
//   <city>Paris</city>
//   <days>3</days>
//   </parameters>
//   </invoke>
//   </function_calls>
//
// Values are text, typed by the parameter's schema when the tools are known.
// Source: Anthropic, "Legacy tool use" (docs.anthropic.com, tool use with Claude 2.1) and the
// anthropic-tools SDK's `function_calls` prompt constructor.

const TOOL_NAME = /^\s*<tool_name>([\s\S]*?)<\/tool_name>/;
const PARAMETERS = /<parameters>([\s\S]*?)(?:<\/parameters>|$)/;
const CHILD = /<([A-Za-z_][\w.-]*)>([\s\S]*?)<\/\1>/g;
const WRAP = wrapper('<function_calls>', '</function_calls>');

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  let pending: number | undefined;
  const invokes = new Seeker(text, '<invoke>');
  const ends = new Seeker(text, '</invoke>');
  for (let m = invokes.find(0); m !== undefined; m = invokes.find(m.end)) {
    const bodyStart = m.end;
    const next = invokes.find(bodyStart);
    const close = ends.find(bodyStart, next?.at);
    if (context.partial && close === undefined) {
      pending = widen(text, { start: m.at, end: bodyStart }, WRAP).start;
      break;
    }
    const bodyEnd = close?.at ?? next?.at ?? text.length;
    const own = { start: m.at, end: close?.end ?? bodyEnd };
    const span = widen(text, own, WRAP);
    if (context.partial && waitsForClose(text, own, WRAP)) pending = Math.min(pending ?? span.start, span.start);
    const body = text.slice(bodyStart, bodyEnd);
    const name = TOOL_NAME.exec(body)?.[1]?.trim();
    if (name === undefined || name === '') {
      found.problems.push({ start: span.start, end: span.end, message: '<invoke> without a <tool_name> (expected <invoke><tool_name>NAME</tool_name><parameters>…</parameters></invoke>)' });
      continue;
    }
    const args: Record<string, unknown> = {};
    const params = PARAMETERS.exec(body)?.[1] ?? '';
    CHILD.lastIndex = 0;
    for (let c = CHILD.exec(params); c !== null; c = CHILD.exec(params)) {
      defineOwn(args, c[1]!, context.value(name, c[1]!, tagValue(c[2]!)));
    }
    found.calls.push({ start: span.start, end: span.end, name, arguments: args });
  }
  return formatResult(found.calls, found.problems, pending);
}

export const anthropicLegacy: ToolCallFormat = {
  name: 'anthropic-legacy',
  models: 'Claude 2.1-era prompted tool use (<invoke><tool_name>)',
  markers: '<',
  detect: (text) => text.indexOf('<invoke>'),
  parse,
};
