// Simple paths (`$.a.b[0].c`, RFC 9535's singular queries: names and indexes only) compiled to
// direct property access over keys prepared once. The rules are the RFC's:
// - a name selects a member of an object, never of an array or a string (`$.list.length` is
//   nothing), and only the object's own members;
// - an index selects an element of an array only (negative: from the end), never an object's
//   member named "0";
// - anything else (stepping into null, a number, a missing member) gives undefined: no node.
// The root is read with plain property access, so a context whose prototype is the run context
// (for_each's `item`/`index`) works unchanged; an inherited method there (`$.toString`) is no
// member, and gives undefined.

import { isRecord } from '../common/json.js';
import { plainRoot } from './context.js';
import type { Getter, RunContext } from './types.js';

/** A member name, or an array index (negative: from the end). */
export type Key = string | number;

type Bag = Record<string, unknown>;

function rootMember(ctx: RunContext, name: string): unknown {
  if (!isRecord(ctx)) return undefined;
  const v = (ctx as Bag)[name];
  return typeof v === 'function' ? undefined : v;
}

function element(value: unknown, index: number): unknown {
  if (!Array.isArray(value)) return undefined;
  const at = index < 0 ? value.length + index : index;
  return at >= 0 && at < value.length ? value[at] : undefined;
}

function member(value: unknown, name: string): unknown {
  return isRecord(value) && Object.hasOwn(value, name) ? value[name] : undefined;
}

export function simpleGetter(keys: readonly Key[]): Getter {
  if (keys.length === 0) return plainRoot; // `$` itself: flattened when layered, so no member is lost
  if (!keys.every((k) => typeof k === 'string')) return generalGetter(keys);
  // Specialised closures for the common short paths of names, written out: no loop, no calls.
  const [k0, k1, k2] = keys as readonly string[];
  switch (keys.length) {
    case 1:
      return (ctx) => rootMember(ctx, k0!);
    case 2:
      return (ctx) => {
        const a = rootMember(ctx, k0!);
        return typeof a === 'object' && a !== null && !Array.isArray(a) && Object.hasOwn(a, k1!) ? (a as Bag)[k1!] : undefined;
      };
    case 3:
      return (ctx) => {
        const a = rootMember(ctx, k0!);
        if (typeof a !== 'object' || a === null || Array.isArray(a) || !Object.hasOwn(a, k1!)) return undefined;
        const b = (a as Bag)[k1!];
        return typeof b === 'object' && b !== null && !Array.isArray(b) && Object.hasOwn(b, k2!) ? (b as Bag)[k2!] : undefined;
      };
    default:
      return generalGetter(keys);
  }
}

function generalGetter(keys: readonly Key[]): Getter {
  const n = keys.length;
  const first = keys[0] as Key;
  return (ctx: RunContext) => {
    let current: unknown = typeof first === 'number' ? element(ctx, first) : rootMember(ctx, first);
    for (let i = 1; i < n && current !== undefined; i++) {
      const key = keys[i] as Key;
      current = typeof key === 'number' ? element(current, key) : member(current, key);
    }
    return current;
  };
}
