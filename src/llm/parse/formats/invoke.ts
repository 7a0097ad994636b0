import { isRecord } from '../../../common/json.js';
import { parseLenientJson } from '../lenient-json.js';
import { type FormatContext, formatResult, type FormatResult, newFound, type ToolCallFormat } from '../format.js';
import { findMatch, searchText, Seeker } from './special-tokens.js';
import { tagValue, waitsForClose, widen, wrapper, type Wrapper } from './xml-tags.js';
import { defineOwn } from '../../../common/define-own.js';

// `<invoke name="…">` with `<parameter name="…">` children: MiniMax-M2, Claude-style prompts, and
// DeepSeek V3.2's DSML, which spells the same tags with a `｜DSML｜` prefix.
//
//   <minimax:tool_call>                         <function_calls>
//   <invoke name="get_weather">                 <invoke name="get_weather">
//   <parameter name="city">Paris</parameter>    <parameter name="city">Paris</parameter>
//   </invoke>                                   </invoke>
//   </minimax:tool_call>                        </function_calls>
//
//   <｜DSML｜function_calls><｜DSML｜invoke name="get_weather"><｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>…
//
// Tags may carry a namespace prefix (`ns:invoke`). Values are text, typed by the parameter's
// schema when the tools are known; DSML's `string="false"` marks a JSON value. An invoke with no
// parameter tags and a JSON object inside takes the object as its arguments (SGLang reads DSML so).
// Source: MiniMaxAI/MiniMax-M2 `chat_template.jinja`; deepseek-ai/DeepSeek-V3.2 `encoding_dsv32.py`;
// vLLM `minimax_m2_tool_parser.py`, `deepseekv32_tool_parser.py`.

const PREFIX = '((?:[A-Za-z][\\w-]*:)|\\uff5cDSML\\uff5c)?';
const INVOKE = new RegExp(`<${PREFIX}invoke\\s+name\\s*=\\s*(?:"([^"]*)"|'([^']*)')\\s*>`, 'g');
const WRAP = wrapper(`<${PREFIX}(?:tool_call|function_calls)>`, `</${PREFIX}(?:tool_call|function_calls)>`);
/** Where a block may start: each search is one `<` found, then this tried there (several whole-tag searches cost far more in a CJK text). */
const DETECT = new RegExp(`<(?:${PREFIX}(?:invoke|function_calls>)|[A-Za-z][\\w-]*:tool_call>)`);
/** The wrappers' opening and closing tags, searched for while streaming (see `openWrapper`). */
const WRAP_TAG = new RegExp(`<(/?)${PREFIX}(?:tool_call|function_calls)>`, 'g');
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The searches for one tag prefix (`''`, `ns:`, `｜DSML｜`), made once per text. */
interface Tags {
  readonly end: Seeker;
  readonly param: Seeker;
  readonly paramEnd: Seeker;
}

/** The parameter tag for each prefix, made once (a few prefixes; hostile text may name any number). */
const PARAMS = new Map<string, RegExp>();

function paramTag(prefix: string): RegExp {
  let re = PARAMS.get(prefix);
  if (re === undefined) {
    re = new RegExp(`<${escape(prefix)}parameter\\s+name\\s*=\\s*(?:"([^"]*)"|'([^']*)')([^>]*)>`, 'g');
    if (PARAMS.size >= 16) PARAMS.clear();
    PARAMS.set(prefix, re);
  }
  return re;
}

function tagsFor(text: string, prefix: string, cache: Map<string, Tags>): Tags {
  let tags = cache.get(prefix);
  if (tags === undefined) {
    tags = {
      end: new Seeker(text, `</${prefix}invoke>`),
      param: new Seeker(text, paramTag(prefix)),
      paramEnd: new Seeker(text, `</${prefix}parameter>`),
    };
    cache.set(prefix, tags);
  }
  return tags;
}

function parse(text: string, context: FormatContext): FormatResult {
  const found = newFound();
  const invokes = new Seeker(text, INVOKE);
  const cache = new Map<string, Tags>();
  const wrap: Wrapper = WRAP;
  let pending: number | undefined;
  for (let m = invokes.find(0); m !== undefined; m = invokes.find(m.end)) {
    const tags = tagsFor(text, m.match![1] ?? '', cache);
    const name = (m.match![2] ?? m.match![3] ?? '').trim();
    const bodyStart = m.end;
    const next = invokes.find(bodyStart);
    const close = tags.end.find(bodyStart, next?.at);
    if (context.partial && close === undefined) {
      pending = widen(text, { start: m.at, end: bodyStart }, wrap).start;
      break;
    }
    const bodyEnd = close?.at ?? next?.at ?? text.length;
    const own = { start: m.at, end: close?.end ?? bodyEnd };
    const span = widen(text, own, wrap);
    if (context.partial && waitsForClose(text, own, wrap)) pending = Math.min(pending ?? span.start, span.start);
    if (name === '') {
      found.problems.push({ start: span.start, end: span.end, message: '<invoke> with an empty name' });
      continue;
    }
    const first = tags.param.find(bodyStart, bodyEnd);
    if (first === undefined && /^\s*\{/.test(text.slice(bodyStart, Math.min(bodyEnd, bodyStart + 256)))) {
      // No parameter tags, a JSON object: the arguments as JSON (DSML allows either).
      const json = parseLenientJson(text.slice(bodyStart, bodyEnd).trim());
      if (json.ok && isRecord(json.value)) found.calls.push({ start: span.start, end: span.end, name, arguments: json.value });
      else found.problems.push({ start: span.start, end: span.end, name, code: 'INVALID_ARGUMENTS', message: `call to '${name}': the JSON inside <invoke> is not an object${json.ok ? '' : `: ${json.error}`}` });
      continue;
    }
    const args: Record<string, unknown> = {};
    for (let p = first; p !== undefined; ) {
      const nextParam = tags.param.find(p.end, bodyEnd);
      const end = tags.paramEnd.find(p.end, nextParam?.at ?? bodyEnd);
      const key = (p.match![1] ?? p.match![2] ?? '').trim();
      const raw = tagValue(text.slice(p.end, end?.at ?? nextParam?.at ?? bodyEnd));
      defineOwn(args, key, typed(name, key, raw, p.match![3] ?? '', context));
      p = nextParam;
    }
    found.calls.push({ start: span.start, end: span.end, name, arguments: args });
  }
  if (context.partial) {
    const wrapperAt = openWrapper(text);
    if (wrapperAt !== undefined) pending = Math.min(pending ?? wrapperAt, wrapperAt);
  }
  return formatResult(found.calls, found.problems, pending);
}

/**
 * While streaming: where the last wrapper opens that has not closed. Its calls may be far behind
 * its opening tag (DSML indents them), and a stream that settled past the tag would give them a
 * span without it (the whole text's widens to it).
 */
function openWrapper(text: string): number | undefined {
  let open: number | undefined;
  for (let m = findMatch(text, WRAP_TAG); m !== null; m = findMatch(text, WRAP_TAG, m.index + m[0].length)) open = m[1] === '/' ? undefined : (open ?? m.index);
  return open;
}

/** DSML says per parameter whether it is a string; otherwise the schema decides. */
function typed(tool: string, key: string, raw: string, attributes: string, context: FormatContext): unknown {
  const flag = /string\s*=\s*"(true|false)"/.exec(attributes)?.[1];
  if (flag === 'true') return raw;
  if (flag === 'false') {
    const json = parseLenientJson(raw);
    return json.ok ? json.value : raw;
  }
  return context.value(tool, key, raw);
}

export const invoke: ToolCallFormat = {
  name: 'invoke',
  models: 'MiniMax-M2, Claude-style <invoke name>, DeepSeek V3.2 (DSML)',
  // Every tag the parser reads opens with `<`, whatever its prefix.
  markers: '<',
  // An invoke tag, or a wrapper's opening tag: its calls may come well after it.
  detect: (text) => searchText(text, DETECT),
  parse,
};
