// Dynamic import of a package, through a function the entry point may supply. The CLI runs its
// bundle through vm.Script with V8's code cache, and on Node 20 a script restored from that cache
// cannot run `import()` itself ("A dynamic import callback was not specified"); bin/toolchain.js
// therefore lends its own. Everywhere else this is a plain dynamic import.

type Importer = (specifier: string) => Promise<unknown>;

export function importModule<T>(specifier: string): Promise<T> {
  const lent = (globalThis as { __toolchainImport?: Importer }).__toolchainImport;
  return (lent ? lent(specifier) : import(specifier)) as Promise<T>;
}
