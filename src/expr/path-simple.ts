// Simple paths (`$.a.b[0].c`) compiled to direct property access over a key array prepared
// once. Semantics shared by every variant:
// - a missing member, or stepping into null or a non-object (strings included), gives undefined;
// - the final value is never a function: an inherited method (`$.a.toString`) gives undefined;
// - a negative index counts from the end of an array, and gives undefined on anything else.
// The root is read with plain property access, so a context whose prototype is the run
// context (for_each's `item`/`index`) works unchanged.

import { plainRoot } from './context.js';
import type { Getter, RunContext } from './types.js';

/** A string member name, or an array index (negative: from the end). */
export type Key = string | number;

type Bag = Record<Key, unknown>;

function isObject(value: unknown): value is Bag {
  return typeof value === 'object' && value !== null;
}

function noFunction(value: unknown): unknown {
  return typeof value === 'function' ? undefined : value;
}

export function simpleGetter(keys: readonly Key[]): Getter {
  if (keys.some((k) => typeof k === 'number' && k < 0)) return generalGetter(keys);
  // Specialised closures for the common short paths: no loop, no array reads per run.
  switch (keys.length) {
    case 0:
      // `$` itself: flattened when the context is layered (for_each), so no member is lost.
      return plainRoot;
    case 1: {
      const k0 = keys[0] as Key;
      return (ctx) => noFunction((ctx as Bag)[k0]);
    }
    case 2: {
      const k0 = keys[0] as Key;
      const k1 = keys[1] as Key;
      return (ctx) => {
        const a = (ctx as Bag)[k0];
        return isObject(a) ? noFunction(a[k1]) : undefined;
      };
    }
    case 3: {
      const k0 = keys[0] as Key;
      const k1 = keys[1] as Key;
      const k2 = keys[2] as Key;
      return (ctx) => {
        const a = (ctx as Bag)[k0];
        if (!isObject(a)) return undefined;
        const b = a[k1];
        return isObject(b) ? noFunction(b[k2]) : undefined;
      };
    }
    default:
      return generalGetter(keys);
  }
}

function generalGetter(keys: readonly Key[]): Getter {
  const n = keys.length;
  return (ctx: RunContext) => {
    let current: unknown = ctx;
    for (let i = 0; i < n; i++) {
      if (!isObject(current)) return undefined;
      let key = keys[i] as Key;
      if (typeof key === 'number' && key < 0) {
        if (!Array.isArray(current)) return undefined;
        key = current.length + key;
        if (key < 0) return undefined;
      }
      current = current[key];
    }
    return noFunction(current);
  };
}
