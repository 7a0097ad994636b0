// Deep equality of JSON values for `==` / `!=` in `when`.
// - Scalars compare with ===, except that undefined (a path that matched nothing) equals null,
//   so `$.maybe == null` tests for absence.
// - Arrays: same length, equal elements in order. Objects: the same own enumerable keys with
//   equal values; key order doesn't matter.
// Iterative, with a pair set for cycles, so deep or circular data can't overflow the stack.

export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: unknown[] = [a, b];
  let seen: Map<object, Set<object>> | undefined;
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) {
      if ((x ?? null) === (y ?? null)) continue;
      return false;
    }
    seen ??= new Map();
    let partners = seen.get(x);
    if (partners?.has(y)) continue;
    if (!partners) seen.set(x, (partners = new Set()));
    partners.add(y);
    const xs = Array.isArray(x);
    if (xs !== Array.isArray(y)) return false;
    if (xs) {
      const ya = y as unknown[];
      if (x.length !== ya.length) return false;
      for (let i = 0; i < x.length; i++) stack.push(x[i], ya[i]);
      continue;
    }
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    const keys = Object.keys(xo);
    if (keys.length !== Object.keys(yo).length) return false;
    for (const k of keys) {
      if (!Object.hasOwn(yo, k)) return false;
      stack.push(xo[k], yo[k]);
    }
  }
  return true;
}
