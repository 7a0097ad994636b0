// The server side of the HTTP benchmark, in its own process so that the load generator does not
// share its event loop: an engine with the 3-step no-op chain behind `createServer`, in-memory
// service, metrics and (silent) logs on. Prints its URL on stdout, stops on SIGTERM.

import { createEngine } from '../src/engine.js';
import { createServer } from '../src/serve/index.js';

const engine = await createEngine();
engine.registerTool({ name: 'noop', handler: () => ({}) });
engine.addChain('name: three_noop\nsteps:\n  - { name: a, tool: noop }\n  - { name: b, tool: noop }\n  - { name: c, tool: noop }\n');
const server = await createServer(engine, { webRoot: false });
const url = await server.listen({ port: 0 });
process.stdout.write(`${url}\n`);
process.once('SIGTERM', () => {
  void server.close(0).then(() => engine.close()).then(() => process.exit(0));
});
