import { childPointer } from '../common/json-pointer.js';
import { FORBIDDEN_KEYS } from './safe-value.js';
import { BAIL, keyOf, plainValue, quoted, startsPlain } from './yaml-scalar.js';

// One-line flow collections for the block-YAML reader (`{ initial: 100ms, factor: 2 }`,
// `[TIMEOUT]`): scalars and nested collections that close on the line they open. A flow
// collection over several lines, a comment, a pair in a sequence or a `:` inside a scalar
// leaves the file to yaml (BAIL).

/** Where the offsets of what is read go, and how deep collections may nest. */
export interface FlowSink {
  readonly values: Map<string, number>;
  readonly keys: Map<string, number>;
  readonly maxDepth: number;
}

const SPACE = 0x20;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The flow collection opening at `open`: [value, index after its closing bracket]. */
export function readFlow(text: string, open: number, pointer: string, depth: number, sink: FlowSink): [unknown, number] {
  if (depth > sink.maxDepth) throw BAIL;
  const isMap = text.charCodeAt(open) === 0x7b;
  const close = isMap ? 0x7d : 0x5d;
  const map: Record<string, unknown> = {};
  const list: unknown[] = [];
  let i = skipSpaces(text, open + 1);
  if (text.charCodeAt(i) === close) return [isMap ? map : list, i + 1];
  for (;;) {
    let child: string;
    let name = '';
    if (isMap) {
      const keyAt = i;
      const [key, end] = flowScalar(text, i);
      name = keyOf(key);
      if (FORBIDDEN_KEYS.has(name) || Object.hasOwn(map, name) || text.charCodeAt(end) !== COLON || text.charCodeAt(end + 1) !== SPACE) throw BAIL;
      child = childPointer(pointer, name);
      sink.keys.set(child, keyAt);
      i = skipSpaces(text, end + 1);
    } else child = childPointer(pointer, list.length);
    sink.values.set(child, i);
    const c = text.charCodeAt(i);
    const [value, end] = c === 0x5b || c === 0x7b ? readFlow(text, i, child, depth + 1, sink) : flowScalar(text, i);
    if (isMap) map[name] = value;
    else list.push(value);
    i = skipSpaces(text, end);
    const d = text.charCodeAt(i);
    if (d === close) return [isMap ? map : list, i + 1];
    if (d !== COMMA) throw BAIL; // a pair in a sequence, a comment, a line end: left to yaml
    i = skipSpaces(text, i + 1);
    if (text.charCodeAt(i) === close) return [isMap ? map : list, i + 1];
  }
}

function skipSpaces(text: string, from: number): number {
  let i = from;
  while (text.charCodeAt(i) === SPACE) i++;
  return i;
}

/** A quoted or plain scalar inside a flow collection, ending before `,`, a bracket or `: `. */
function flowScalar(text: string, at: number): [unknown, number] {
  const c = text.charCodeAt(at);
  if (c === 0x22 || c === 0x27) return quoted(text, at);
  if (!startsPlain(text, at, true)) throw BAIL;
  let last = at;
  for (let i = at + 1; ; i++) {
    const d = text.charCodeAt(i);
    if (d === COMMA || d === 0x5b || d === 0x5d || d === 0x7b || d === 0x7d || d === COLON || d === 0x0a || i >= text.length) {
      // A `:` inside a flow scalar (a URL, `a:b`) is read differently by YAML versions: left to yaml.
      if (d === COLON && text.charCodeAt(i + 1) !== SPACE && i + 1 < text.length && text.charCodeAt(i + 1) !== 0x0a) throw BAIL;
      return [plainValue(text.slice(at, last + 1)), last + 1];
    }
    if (d === 0x23 && text.charCodeAt(i - 1) === SPACE) throw BAIL;
    if (d !== SPACE) last = i;
  }
}
