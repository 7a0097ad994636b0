import { importOptional } from '../common/optional-package.js';
import type { Engine } from '../engine/types.js';
import type { ServerOptions, ToolchainServer } from './create-server.js';

// The library entry's `createServer`: Fastify and its plugins load on the first call, not when
// `toolchain` is imported by an application that never serves HTTP. They are optional packages:
// without them this fails with PACKAGE_MISSING, not with a stack from inside create-server.

/** Loads the server's packages, or throws PACKAGE_MISSING naming the one to install. */
export async function loadServerPackages(): Promise<void> {
  await importOptional('fastify');
  await importOptional('@fastify/static');
}

export async function createServer(engine: Engine, options: ServerOptions = {}): Promise<ToolchainServer> {
  await loadServerPackages();
  const { createServer: create } = await import('./create-server.js');
  return create(engine, options);
}
