// `npm run bench`: every benchmark of the project, one after another, each in a fresh process. In
// one shared process a bench's figures depended on the benches before it (their heap counted in
// another's RSS, their type feedback slowed another's code). Each prints its figures next to its
// baseline; a full run also writes them, with the date and the machine, to
// docs/internals/performance.md. `npm run bench -- executor compiler` runs only those and writes
// nothing.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCHES, performancePage, thisMachine, type BenchOutput } from './performance-page.js';


/** A bench that runs longer has hung (the longest takes about five minutes): it is ended and named, and the rest run. */
const TIMEOUT_MS = 20 * 60_000;
const REPO = join(import.meta.dirname, '..', '..');
const PAGE = join(REPO, 'docs', 'internals', 'performance.md');

/** Runs one bench, passing its output through as it comes and keeping a copy. */
function runBench(name: string): Promise<{ text: string; failure: string | undefined }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', join(import.meta.dirname, `${name}.js`)], { stdio: ['ignore', 'pipe', 'inherit'], timeout: TIMEOUT_MS });
    let text = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      text += chunk;
      process.stdout.write(chunk);
    });
    child.on('close', (status, signal) => {
      if (status === 0) return resolve({ text, failure: undefined });
      const failure = `it ended with ${signal ?? `exit code ${String(status)}`}${signal === 'SIGTERM' ? `, still running after ${TIMEOUT_MS / 60_000} minutes` : ''}`;
      console.log(`  (bench ${name}: ${failure})`);
      resolve({ text, failure });
    });
  });
}

const only = process.argv.slice(2);
const unknown = only.filter((name) => !BENCHES.some((b) => b.name === name));
if (unknown.length > 0) {
  console.error(`no bench named ${unknown.join(', ')}; the benches are ${BENCHES.map((b) => b.name).join(', ')}`);
  process.exit(2);
}

const machine = thisMachine();
const outputs: BenchOutput[] = [];
for (const bench of BENCHES) {
  if (only.length > 0 && !only.includes(bench.name)) continue;
  const { text, failure } = await runBench(bench.name);
  outputs.push({ ...bench, text, ...(failure !== undefined ? { failure } : {}) });
}
if (only.length === 0) {
  writeFileSync(PAGE, performancePage(machine, outputs));
  console.log(`wrote ${PAGE}`);
}
process.exitCode = outputs.every((o) => o.failure === undefined) ? 0 : 1;
