import { ToolchainError } from './errors.js';
import { importModule } from './import-module.js';

// The integrations are optional peer dependencies: an application that runs chains on SQLite
// installs none of them. Naming a feature whose package is not installed fails with one line
// that says what to install, instead of Node's "Cannot find package" and a stack.

/** Each optional package, and what needs it (the end of "install NAME to use …"). */
export const OPTIONAL_PACKAGES = {
  pg: 'postgres:// run stores',
  ioredis: 'redis:// run stores and queues',
  bullmq: 'queues of runs (--queue, workers)',
  fastify: 'toolchain serve and createServer',
  '@fastify/static': 'toolchain serve and createServer',
  '@resvg/resvg-js': 'toolchain graph --format png',
  'pino-pretty': 'serve --verbose on a terminal',
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/** `import(specifier)` of an optional package (or a file inside it), or PACKAGE_MISSING. */
export async function importOptional<T>(name: OptionalPackage, specifier: string = name): Promise<T> {
  try {
    return await importModule<T>(specifier);
  } catch (error) {
    throw missingOr(name, error);
  }
}

/** The same for a package required synchronously. */
export function requireOptional<T>(name: OptionalPackage, load: () => T): T {
  try {
    return load();
  } catch (error) {
    throw missingOr(name, error);
  }
}

/** PACKAGE_MISSING when the error is the package itself not being found; the error otherwise. */
function missingOr(name: OptionalPackage, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  // Node names the package it could not find in quotes; a missing dependency *of* the package
  // names another one, and is reported as it is.
  if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${name}`)) {
    return new ToolchainError('PACKAGE_MISSING', `install ${name} to use ${OPTIONAL_PACKAGES[name]} (npm install ${name})`);
  }
  return error;
}
