// `npm run bench`: every benchmark of the project, one after another, each in a fresh process
// (as issue 15's harness measures every engine). In one shared process a bench's figures depended
// on the benches before it: their heap counted in the RSS of 10,000 parked runs, and their type
// feedback slowed the tool-call stream by a fifth. Each prints its figures next to its baseline.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const BENCHES = [
  'compiler',
  'expr-path.bench',
  'executor',
  'executor-scale',
  'isolation',
  'registry-validation',
  'reload-latency',
  'reload-memory',
  'cold-start',
  'llm-parse',
  'llm-mcp',
  'serve',
  'store',
  'durable',
  'queue',
];

/** A bench that runs longer has hung (the longest takes about five minutes): it is ended and named, and the rest run. */
const TIMEOUT_MS = 20 * 60_000;

let failed = 0;
for (const name of BENCHES) {
  const { status, signal } = spawnSync(process.execPath, ['--expose-gc', join(import.meta.dirname, `${name}.js`)], { stdio: 'inherit', timeout: TIMEOUT_MS });
  if (status !== 0) {
    failed++;
    console.log(`  (bench ${name} ended with ${signal ?? `exit code ${String(status)}`}${signal === 'SIGTERM' ? `: still running after ${TIMEOUT_MS / 60_000} minutes` : ''})`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
