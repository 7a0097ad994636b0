import { createRequire } from 'node:module';

// A package required the first time something uses it, synchronously (the functions that use these
// keep their synchronous signatures). `import { createEngine } from 'toolchain'` must not pay for
// pino, prom-client or OpenTelemetry (≈ 150 ms together) when nothing observes runs. Only for
// packages that ship CommonJS.

const load = createRequire(import.meta.url);

export function lazyPackage<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load(name) as T);
}
