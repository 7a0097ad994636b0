// `toolchain run city_brief` as a whole process from a cold start (target: median
// ≤ 200 ms), next to a bare `node -e ''` start, and where the time goes: measured phase by phase
// in a fresh process through the library (import, chains, plugins, the run itself). Caches live
// where they do for users: a per-user directory, here a fresh one named by
// TOOLCHAIN_CACHE_DIR that the first, unmeasured run fills.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, runIfMain, verdict, type BenchResult } from './harness.js';

const REPO = join(import.meta.dirname, '..', '..');
const QUESTION = 'question=What time is it in Osaka?';
const CACHE_DIR = mkdtempSync(join(tmpdir(), 'toolchain-bench-cold-'));
const ENV = { ...process.env, TOOLCHAIN_CACHE_DIR: CACHE_DIR };

function wallMs(args: string[], runs = 7): number {
  const times: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const t = performance.now();
    execFileSync(process.execPath, args, { cwd: REPO, stdio: 'ignore', env: ENV });
    if (i > 0) times.push(performance.now() - t); // the first run fills the OS file cache and ours
  }
  return median(times);
}

// The phases take the engine apart, so they import its internal modules from the build, not the
// public entry (which exports none of them).
const dist = (...path: string[]): string => JSON.stringify(join(REPO, 'dist', ...path));
const PHASES = `
const t0 = performance.now();
const [{ openUserCache }, { createRegistry, createSchemaCompiler }, { createEngine }, { createPluginHost }] = await Promise.all([
  import(${dist('cache', 'index.js')}), import(${dist('registry', 'index.js')}), import(${dist('engine', 'engine.js')}), import(${dist('plugins', 'index.js')}),
]);
const t1 = performance.now();
const cache = openUserCache();
const registry = createRegistry({ load: 'lazy', schemas: createSchemaCompiler({ cache }) });
await createEngine({ chainsDir: 'chains', registry, cache });
const t2 = performance.now();
const host = createPluginHost({ dir: 'plugins', registry, cache });
await host.ready;
const t3 = performance.now();
console.log(JSON.stringify({ imports: t1 - t0, chains: t2 - t1, plugins: t3 - t2 }));
`;

const RUN = `
const lib = await import(${JSON.stringify(join(REPO, 'dist', 'index.js'))});
const engine = await lib.createEngine({ chainsDir: 'chains', pluginsDir: 'plugins', load: 'lazy' });
const t = performance.now();
const result = await engine.run('city_brief', { question: 'What time is it in Osaka?' });
if (result.status !== 'succeeded') throw new Error(JSON.stringify(result.error));
console.log(JSON.stringify({ run: performance.now() - t }));
`;

// The library, as a user imports it (the bundled entry package.json names), to the end of
// a first run of a 3-step chain, as a whole process (target ≤ 200 ms).
const FIRST_RUN = `
import { createEngine } from ${JSON.stringify(join(REPO, 'dist', 'index.bundle.js'))};
const engine = await createEngine();
engine.registerTool({ name: 'inc', parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, handler: (a) => ({ n: a.n + 1 }) });
engine.addChain('name: three\\ninputs: { n: integer }\\nsteps:\\n  - { name: a, tool: inc, input_map: { n: $.n } }\\n  - { name: b, tool: inc, input_map: { n: $.a.n } }\\n  - { name: c, tool: inc, input_map: { n: $.b.n } }\\n');
const result = await engine.run('three', { n: 0 });
if (result.outputs?.n !== 3) throw new Error(JSON.stringify(result));
`;

function phases(): Record<string, number> {
  const samples: Record<string, number[]> = {};
  for (const [name, code] of [['phases', PHASES], ['run', RUN]] as const) {
    const file = join(tmpdir(), `toolchain-cold-${name}.mjs`);
    writeFileSync(file, code);
    for (let i = 0; i < 5; i++) {
      const out = JSON.parse(execFileSync(process.execPath, [file], { cwd: REPO, encoding: 'utf8', env: ENV })) as Record<string, number>;
      for (const [k, v] of Object.entries(out)) (samples[k] ??= []).push(v);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

export async function benchColdStart(): Promise<BenchResult> {
  const node = wallMs(['-e', '']);
  const imports = wallMs([join(REPO, 'bin', 'toolchain.js'), '--version']);
  const run = wallMs([join(REPO, 'bin', 'toolchain.js'), 'run', 'city_brief', '--input', QUESTION]);
  const p = phases();
  const firstRunFile = join(tmpdir(), 'toolchain-first-run.mjs');
  writeFileSync(firstRunFile, FIRST_RUN);
  const firstRun = wallMs([firstRunFile]);
  rmSync(CACHE_DIR, { recursive: true, force: true });
  const f = (ms: number | undefined): string => `${(ms ?? NaN).toFixed(0)} ms`;
  return {
    name: 'cold-start',
    lines: [
      `toolchain run city_brief, whole process, caches in a per-user directory: ${f(run)} median of 7 (target ≤ 200 ms: ${verdict(run <= 200)}; ` +
        `≤ node's start + 100 ms = ${f(node + 100)}: ${verdict(run <= node + 100)}); baseline node -e '' ${f(node)}`,
      `import { createEngine } from 'toolchain' to the end of a first run of a 3-step chain, whole process: ${f(firstRun)} median of 7 (target ≤ 200 ms: ${verdict(firstRun <= 200)})`,
      `where the time goes: node start ${f(node)}, loading the CLI (toolchain --version) ${f(imports - node)}, then (library, fresh process) ` +
        `chains ${f(p.chains)}, plugins ${f(p.plugins)}, the run ${f(p.run)} (its first calls compile validators; the city data is read from its per-user cache file)`,
    ],
  };
}

await runIfMain(import.meta.url, benchColdStart);
