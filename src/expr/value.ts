// compileValue: an `input_map` / `outputs` value → one getter, built once.
// - `$…` is a JSONPath; `$$…` is the literal string with the first `$` removed.
// - A string containing `{{` is a template (template.ts).
// - Any other scalar is a literal; arrays and plain objects are mapped member by member.
// - In an object, members whose value comes out undefined (a path that matched nothing) are left
//   out, so a tool sees a missing argument rather than an explicit undefined. In an array the
//   position is kept and holds undefined, so later elements don't shift.
// - Subtrees without paths are folded into one constant, built once and returned as is every
//   run. Its arrays and objects are fresh copies (the caller's parsed document is untouched)
//   frozen all the way down, so a tool that mutates its arguments can't change the next run's.
// Problems are collected for every bad string, not only the first; the parts that failed read
// as undefined.

import { defineOwn } from '../common/define-own.js';
import { isRecord } from '../common/json.js';
import { compilePath } from './path.js';
import { childPointer } from '../common/json-pointer.js';
import { ExprSyntaxError } from './syntax-error.js';
import { compileTemplate, isTemplate } from './template.js';
import type { CompiledPath, CompiledValue, ExprProblem, Getter, PathRef } from './types.js';

interface Node {
  readonly get: Getter;
  /** Set when the node has no path anywhere: `value` is then the (frozen) result. */
  readonly constant: boolean;
  readonly value: unknown;
}

interface Collector {
  readonly refs: PathRef[];
  readonly problems: ExprProblem[];
}

const NOTHING: Getter = () => undefined;

/**
 * Compiles a value. `pointer` is where the value sits in its file; the pointers in `refs` and
 * `problems` are relative to it (the caller prefixes it), so it only documents the call site.
 */
export function compileValue(value: unknown, pointer = ''): { value: CompiledValue; problems: ExprProblem[] } {
  void pointer;
  const collector: Collector = { refs: [], problems: [] };
  const node = compileNode(value, '', collector);
  const sources: Record<string, string> = {};
  if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      const source = stringSource(value[key]);
      if (source !== undefined) defineOwn(sources, key, source);
    }
  }
  const compiled: CompiledValue = Object.freeze({
    get: node.get,
    refs: Object.freeze(collector.refs),
    constant: node.constant,
    sources: Object.freeze(sources),
  });
  return { value: compiled, problems: collector.problems };
}

/** The path or template text a string stands for, undefined for literals. */
function stringSource(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.startsWith('$$')) return undefined;
  if (value.startsWith('$') || isTemplate(value)) return value;
  return undefined;
}

function compileNode(value: unknown, pointer: string, out: Collector): Node {
  if (typeof value === 'string') return compileString(value, pointer, out);
  if (Array.isArray(value)) return compileArray(value, pointer, out);
  if (isPlainObject(value)) return compileObject(value, pointer, out);
  // Numbers, booleans, null; anything else a caller hands in is passed through untouched.
  return constant(value);
}

/** `value` is a scalar or a container built here from already-frozen constants. */
function constant(value: unknown): Node {
  return { get: () => value, constant: true, value };
}

function folded<T extends object>(container: T): Node {
  return constant(Object.freeze(container));
}

function compileString(text: string, pointer: string, out: Collector): Node {
  if (text.startsWith('$$')) return constant(text.slice(1));
  if (text.startsWith('$')) {
    try {
      const path = compilePath(text);
      pushRefs(out.refs, path, pointer);
      return { get: path.get, constant: false, value: undefined };
    } catch (error) {
      if (!(error instanceof ExprSyntaxError)) throw error;
      out.problems.push({
        code: 'BAD_JSONPATH',
        message: `bad JSONPath '${text}' at character ${error.index + 1}: ${error.message}`,
        pointer,
        offset: error.index,
      });
      return { get: NOTHING, constant: false, value: undefined };
    }
  }
  if (isTemplate(text)) {
    const template = compileTemplate(text);
    for (const path of template.paths) {
      if (path.source !== '') pushRefs(out.refs, path, pointer);
    }
    for (const problem of template.problems) {
      out.problems.push({ code: 'BAD_TEMPLATE', message: `bad template '${text}': ${problem.message}`, pointer, offset: problem.offset });
    }
    return { get: template.get, constant: false, value: undefined };
  }
  return constant(text);
}

/** The path's own root, then those its filters' absolute queries read (`$.a[?@.x == $.b.y]` reads b). */
export function pushRefs(refs: PathRef[], path: CompiledPath, pointer: string): void {
  refs.push(Object.freeze({ root: path.root, source: path.source, pointer }));
  for (const root of path.filterRoots) refs.push(Object.freeze({ root, source: path.source, pointer }));
}

function compileArray(items: readonly unknown[], pointer: string, out: Collector): Node {
  const nodes = items.map((item, i) => compileNode(item, childPointer(pointer, i), out));
  if (nodes.every((n) => n.constant)) return folded(nodes.map((n) => n.value));
  const getters = nodes.map((n) => n.get);
  const n = getters.length;
  return {
    get: (ctx) => {
      const result = new Array<unknown>(n);
      for (let i = 0; i < n; i++) result[i] = (getters[i] as Getter)(ctx);
      return result;
    },
    constant: false,
    value: undefined,
  };
}

function compileObject(object: Readonly<Record<string, unknown>>, pointer: string, out: Collector): Node {
  const keys = Object.keys(object);
  const nodes = keys.map((key) => compileNode(object[key], childPointer(pointer, key), out));
  if (nodes.every((n) => n.constant)) {
    const result: Record<string, unknown> = {};
    keys.forEach((key, i) => {
      const v = nodes[i]?.value;
      if (v !== undefined) defineOwn(result, key, v);
    });
    return folded(result);
  }
  const getters = nodes.map((n) => n.get);
  const n = keys.length;
  // The hot loop: prepared key and getter arrays, one result object, nothing else allocated.
  if (!keys.includes('__proto__')) {
    return {
      get: (ctx) => {
        const result: Record<string, unknown> = {};
        for (let i = 0; i < n; i++) {
          const v = (getters[i] as Getter)(ctx);
          if (v !== undefined) result[keys[i] as string] = v;
        }
        return result;
      },
      constant: false,
      value: undefined,
    };
  }
  return {
    get: (ctx) => {
      const result: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) {
        const v = (getters[i] as Getter)(ctx);
        if (v !== undefined) defineOwn(result, keys[i] as string, v);
      }
      return result;
    },
    constant: false,
    value: undefined,
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
