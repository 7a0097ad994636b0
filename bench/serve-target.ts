// The server side of the HTTP benchmark, in its own process so that the load generator does not
// share its event loop: an engine with the 3-step no-op chain behind `createServer`, in-memory
// service, metrics and (silent) logs on, runs recorded in the store named by the first argument
// (default memory:). Prints its URL on stdout, stops on SIGTERM.

import { createEngine } from '../src/engine/engine.js';
import { createServer } from '../src/serve/index.js';

const engine = await createEngine({ store: process.argv[2] ?? 'memory:' });
engine.registerTool({ name: 'noop', handler: () => ({}) });
engine.registerTool({ name: 'sleep', handler: (args) => new Promise((resolve) => setTimeout(() => resolve({}), Number(args.ms))) });
engine.addChain('name: three_noop\nsteps:\n  - { name: a, tool: noop }\n  - { name: b, tool: noop }\n  - { name: c, tool: noop }\n');
// For the SSE fan-out: a wait, then 50 steps whose events go to every client.
engine.addChain(`name: fan_out\nsteps:\n  - { name: wait, tool: sleep, input_map: { ms: 1000 } }\n${Array.from({ length: 50 }, (_, i) => `  - { name: s${i}, tool: noop }`).join('\n')}\n`);
const server = await createServer(engine, { webRoot: false });
const url = await server.listen({ port: 0 });
process.stdout.write(`${url}\n`);
process.once('SIGTERM', () => {
  // The bench reads the peak memory of this process from the last line.
  process.stdout.write(`rss ${process.memoryUsage().rss} ${process.resourceUsage().maxRSS * 1024}\n`);
  void server.close(0).then(() => engine.close()).then(() => process.exit(0));
});
