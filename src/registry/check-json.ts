import { pointerOf } from '../common/json-pointer.js';

// Is a handler's result JSON? One walk answers that and, on the way, bounds the size of its JSON
// text from above, so the common small result is never serialised just to be measured.

export type JsonCheck =
  | {
      readonly ok: true;
      /** An upper bound of the UTF-8 size of `JSON.stringify(value)`. */
      readonly maxBytes: number;
      /** True when an object with `toJSON` (a Date, a class instance) means the value must be round-tripped through JSON. */
      readonly needsNormalising: boolean;
    }
  | { readonly ok: false; readonly path: string; readonly reason: string };

interface Walk {
  bytes: number;
  needsNormalising: boolean;
  /** Objects and arrays being walked, outermost first (a cycle returns to one of them). */
  readonly ancestors: object[];
  /** The keys leading to the current value; turned into a pointer only when something is wrong. */
  readonly keys: (string | number)[];
}

class NotJson {
  readonly path: string;
  constructor(
    keys: readonly (string | number)[],
    readonly reason: string,
  ) {
    this.path = pointerOf(keys);
  }
}

// A UTF-16 code unit is at most 3 bytes of UTF-8, or 6 as a `\u0000` escape.
const MAX_BYTES_PER_CHAR = 6;
const REFUSED_CLASSES: ReadonlyArray<[Function, string]> = [
  [Map, 'a Map (convert it with Object.fromEntries)'],
  [Set, 'a Set (convert it with Array.from)'],
  [WeakMap, 'a WeakMap'],
  [WeakSet, 'a WeakSet'],
  [Promise, 'a Promise (await it before returning)'],
];

function walk(value: unknown, state: Walk, inArray: boolean): void {
  switch (typeof value) {
    case 'string':
      state.bytes += value.length * MAX_BYTES_PER_CHAR + 2;
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new NotJson(state.keys, `${value} is not a JSON number`);
      state.bytes += 24;
      return;
    case 'boolean':
      state.bytes += 5;
      return;
    case 'undefined':
      // JSON drops an undefined member but would turn an array element into null: refuse that.
      if (inArray) throw new NotJson(state.keys, 'undefined is not JSON (use null)');
      return;
    case 'bigint':
      throw new NotJson(state.keys, 'a BigInt is not JSON (return a string or a number)');
    case 'function':
      throw new NotJson(state.keys, 'a function is not JSON');
    case 'symbol':
      throw new NotJson(state.keys, 'a symbol is not JSON');
  }
  if (value === null) {
    state.bytes += 4;
    return;
  }
  const object = value as object;
  // Nesting is shallow in practice: a linear scan beats a Set here.
  if (state.ancestors.includes(object)) throw new NotJson(state.keys, 'the result is circular (it contains itself)');
  state.ancestors.push(object);
  if (Array.isArray(object)) {
    state.bytes += 2;
    for (let i = 0; i < object.length; i++) {
      state.bytes += 1;
      state.keys.push(i);
      walk(object[i], state, true);
      state.keys.pop();
    }
  } else {
    const proto: unknown = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      for (const [cls, name] of REFUSED_CLASSES) {
        if (object instanceof cls) throw new NotJson(state.keys, `${name} is not JSON`);
      }
      state.needsNormalising = true;
    }
    if (typeof (object as { toJSON?: unknown }).toJSON === 'function') {
      // A Date and the like: its JSON is whatever toJSON says; measure it by serialising it.
      state.needsNormalising = true;
      state.bytes += Buffer.byteLength(JSON.stringify(object) ?? 'null');
    } else {
      state.bytes += 2;
      for (const key of Object.keys(object)) {
        const member = (object as Record<string, unknown>)[key];
        if (member === undefined) continue;
        state.bytes += key.length * MAX_BYTES_PER_CHAR + 4;
        state.keys.push(key);
        walk(member, state, false);
        state.keys.pop();
      }
    }
  }
  state.ancestors.pop();
}

/**
 * The common result, a plain object of scalars, bounded without the general walk's state and
 * arrays (which were most of what a quick tool call allocated); undefined when it is anything
 * else (nested, a class instance, a bad number…), which the walk then checks and words.
 */
export function flatJsonBytes(value: object): number | undefined {
  try {
    return flatBytes(value);
  } catch {
    return undefined; // a getter that throws: the general walk says so
  }
}

function flatBytes(value: object): number | undefined {
  const proto: unknown = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || Array.isArray(value)) return undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  let bytes = 2;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return undefined;
    const member = (value as Record<string, unknown>)[key];
    switch (typeof member) {
      case 'string':
        bytes += member.length * MAX_BYTES_PER_CHAR + 2;
        break;
      case 'number':
        if (!Number.isFinite(member)) return undefined;
        bytes += 24;
        break;
      case 'boolean':
        bytes += 5;
        break;
      case 'undefined':
        continue; // JSON drops it, as the walk does
      case 'object':
        if (member !== null) return undefined;
        bytes += 4;
        break;
      default:
        return undefined;
    }
    bytes += key.length * MAX_BYTES_PER_CHAR + 4;
  }
  return bytes;
}

/** Check a result without serialising it. Paths are JSON pointers ('' is the result itself). */
export function checkJson(value: unknown): JsonCheck {
  if (typeof value === 'object' && value !== null) {
    const bytes = flatJsonBytes(value);
    if (bytes !== undefined) return { ok: true, maxBytes: bytes, needsNormalising: false };
  }
  return walkJson(value);
}

/** checkJson's general walk, for a value flatJsonBytes has already turned down. */
export function walkJson(value: unknown): JsonCheck {
  const state: Walk = { bytes: 0, needsNormalising: false, ancestors: [], keys: [] };
  try {
    walk(value, state, false);
  } catch (error) {
    if (error instanceof NotJson) return { ok: false, path: error.path, reason: error.reason };
    // Getters that throw, proxies that refuse: still not a usable result.
    return { ok: false, path: '', reason: `it could not be read (${(error as Error).message})` };
  }
  return { ok: true, maxBytes: state.bytes, needsNormalising: state.needsNormalising };
}
