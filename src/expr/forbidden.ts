// Member names that reach into JavaScript's object machinery rather than into data. A chain has
// no business reading them, and rejecting them at compile time means no run can trip over an
// inherited `constructor` or a poisoned `__proto__` (SPEC §9).
export const FORBIDDEN_MEMBERS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The forbidden names plus the legacy accessors jsonpath-plus' own sandbox also blocks. */
export const FORBIDDEN_IDENTIFIERS: ReadonlySet<string> = new Set([
  ...FORBIDDEN_MEMBERS,
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);
