// Member names that reach into JavaScript's object machinery rather than into data. A chain has
// no business reading them, and rejecting them at compile time means no run can trip over an
// inherited `constructor` or a poisoned `__proto__`.
export const FORBIDDEN_MEMBERS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
