import { createRequire, syncBuiltinESMExports } from 'node:module';

// The unit project's promise, kept by force: a unit test starts no process, no worker thread and
// opens no connection to a service. Each of those throws here, naming the test's file, so a test
// that needs one belongs to the integration project (test/projects.ts). Listening on loopback is
// allowed (a test's own HTTP stub); connecting anywhere but to such a stub is not.

// The built-ins' CommonJS objects, which syncBuiltinESMExports copies into their ES exports.
const require = createRequire(import.meta.url);
const childProcess = require('node:child_process') as Record<string, unknown>;
const workerThreads = require('node:worker_threads') as Record<string, unknown>;
const net = require('node:net') as typeof import('node:net');

const refuse = (what: string) => (): never => {
  throw new Error(`a unit test may not ${what}; move this file to the integration project in test/projects.ts`);
};

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  childProcess[name] = refuse(`start a process (child_process.${name})`);
}
workerThreads.Worker = refuse('start a worker thread');
const SERVICE_PORTS = new Set([5432, 6379]);
const connect = net.connect;
const guardedConnect = ((...args: Parameters<typeof net.connect>) => {
  const first = args[0] as unknown;
  const port = typeof first === 'object' && first !== null ? Number((first as { port?: unknown }).port) : Number(first);
  if (SERVICE_PORTS.has(port)) refuse(`connect to a service (port ${port})`)();
  return connect(...args);
}) as typeof net.connect;
net.connect = guardedConnect;
net.createConnection = guardedConnect;
// The named ESM exports of the built-ins follow the patched CommonJS objects.
syncBuiltinESMExports();
