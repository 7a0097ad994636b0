// A handler sees only the environment variables its manifest lists (`env: [GEO_API_KEY]`),
// read when it is called so a changed variable is picked up without a reload.

const EMPTY: Readonly<Record<string, string | undefined>> = Object.freeze({});

export type EnvView = () => Readonly<Record<string, string | undefined>>;

export function restrictEnv(names: readonly string[], source: Readonly<Record<string, string | undefined>>): EnvView {
  if (names.length === 0) return () => EMPTY;
  const unique = [...new Set(names)];
  // fromEntries defines own data properties, so even a listed `__proto__` stays a plain key.
  return () => Object.freeze(Object.fromEntries(unique.map((name) => [name, source[name]])));
}
