import type { RunContext } from './types.js';
import { defineOwn } from '../common/define-own.js';
import { isRecord } from '../common/json.js';

/**
 * The run context as one plain object. Inside `for_each` the executor passes an object whose
 * prototype is the real context (it adds `item` and `index` without copying). Direct property
 * access sees through that, but the general JSONPath evaluator reads own members only (as RFC 9535
 * says), so paths it evaluates get a flattened copy. Plain contexts (prototype `Object.prototype` or
 * `null`) are returned as they are: no copy on the common path.
 */
export function plainRoot(ctx: RunContext): RunContext {
  // A path compiled on its own may be handed any JSON value as its root: only layered objects flatten.
  if (!isRecord(ctx)) return ctx;
  const proto: unknown = Object.getPrototypeOf(ctx);
  if (proto === null || proto === Object.prototype) return ctx;
  const flat: Record<string, unknown> = {};
  // for…in walks own and inherited enumerable members, nearest first; the first one seen wins
  // so `item` on the outer object shadows an `item` in the context, as property access would.
  for (const key in ctx) {
    if (Object.hasOwn(flat, key)) continue;
    defineOwn(flat, key, ctx[key]);
  }
  return flat;
}
