// Keys that reach into JavaScript's object machinery rather than into data: through assignment,
// merges without spread or `obj[k][j] = v` they reach Object.prototype, and a path that reads
// them finds an inherited `constructor` or a poisoned `__proto__`. The loader drops them from
// every chain and manifest (and reports them), and the compiler refuses them as names and members.
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
