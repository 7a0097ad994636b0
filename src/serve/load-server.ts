import type { Engine } from '../engine.js';
import type { ServerOptions, ToolchainServer } from './create-server.js';

// The library entry's `createServer`: Fastify and its plugins load on the first call, not when
// `toolchain` is imported by an application that never serves HTTP.
export async function createServer(engine: Engine, options: ServerOptions = {}): Promise<ToolchainServer> {
  const { createServer: create } = await import('./create-server.js');
  return create(engine, options);
}
