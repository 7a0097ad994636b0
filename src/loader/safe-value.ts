import { FORBIDDEN_KEYS } from '../common/forbidden-keys.js';

/**
 * A fresh copy of a toJS() result made of plain arrays and plain objects only, without forbidden
 * keys. yaml already stores `__proto__` as an own property, but an own `__proto__` still turns
 * into a prototype change the moment later code runs Object.assign or a for-in copy over it.
 * Aliases are copied per use (their expansion is already bounded by maxAliasCount).
 */
export function toPlainValue(value: unknown): unknown {
  return copy(value, new Set());
}

function copy(value: unknown, ancestors: Set<object>): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (ancestors.has(value)) throw new RangeError('value contains itself');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((item: unknown) => copy(item, ancestors));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) continue;
      out[key] = copy((value as Record<string, unknown>)[key], ancestors);
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}
