// A plugin made of GitHub's REST API document (@octokit/openapi, about 1,200 operations): the time
// from createEngine to every tool registered, in a fresh process each time (target: median
// ≤ 2 s, in both load modes: an OpenAPI document's tools compile on first call either way), with
// the CPU time beside it (on a shared machine the wall time also counts the other processes),
// next to the baseline of reading and parsing the document's JSON alone. Then the first call's
// extra cost, when a tool compiles its parameters' validator.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, runIfMain, verdict, type BenchResult } from './harness.js';

const REPO = join(import.meta.dirname, '..', '..');
const TARGET_MS = 2_000;
const RUNS = 5;
const GITHUB = createRequire(join(REPO, 'package.json')).resolve('@octokit/openapi/generated/api.github.com.json');

const LOAD = (pluginsDir: string, load: string): string => `
const lib = await import(${JSON.stringify(join(REPO, 'dist', 'index.js'))});
const t0 = performance.now();
const c0 = process.cpuUsage();
const engine = await lib.createEngine({ pluginsDir: ${JSON.stringify(pluginsDir)}, load: '${load}', cache: 'off' });
const t1 = performance.now();
const cpu = process.cpuUsage(c0);
const status = engine.plugins()[0];
if (status.status !== 'active') throw new Error(JSON.stringify(status.diagnostics));
const tool = engine.tools().get('github/repos_get');
const t2 = performance.now();
const prepared = tool.prepare({ owner: 'octocat', repo: 'hello-world' });
const t3 = performance.now();
if (!prepared.ok) throw new Error(JSON.stringify(prepared.problems));
await engine.close();
console.log(JSON.stringify({ load: t1 - t0, cpu: (cpu.user + cpu.system) / 1000, tools: status.tools.length, firstPrepare: t3 - t2 }));
`;

const PARSE = `
const { readFileSync } = await import('node:fs');
const t0 = performance.now();
const c0 = process.cpuUsage();
JSON.parse(readFileSync(${JSON.stringify(GITHUB)}, 'utf8'));
const cpu = process.cpuUsage(c0);
console.log(JSON.stringify({ load: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 }));
`;

interface Sample {
  readonly load: number;
  readonly cpu: number;
  readonly tools?: number;
  readonly firstPrepare?: number;
}

function samples(script: string): Sample[] {
  const out: Sample[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const text = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (i > 0) out.push(JSON.parse(text.trim().split('\n').at(-1)!) as Sample); // the first fills the OS file cache
  }
  return out;
}

export async function benchOpenApiLoad(): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'toolchain-bench-openapi-'));
  try {
    const pluginsDir = join(root, 'plugins');
    mkdirSync(join(pluginsDir, 'github'), { recursive: true });
    writeFileSync(join(pluginsDir, 'github', 'plugin.yaml'), `name: github\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ${JSON.stringify(GITHUB)}\n`);
    const lazy = samples(LOAD(pluginsDir, 'lazy'));
    const eager = samples(LOAD(pluginsDir, 'eager'));
    const parse = samples(PARSE);
    const fig = (xs: readonly Sample[]): string => `median ${median(xs.map((x) => x.load)).toFixed(0)} ms (CPU ${median(xs.map((x) => x.cpu)).toFixed(0)} ms)`;
    const lazyMs = median(lazy.map((s) => s.load));
    const eagerMs = median(eager.map((s) => s.load));
    return {
      name: 'openapi-load',
      lines: [
        `GitHub's document, ${lazy[0]!.tools} tools, load: 'lazy': ${fig(lazy)}, ${RUNS} fresh processes — target ≤ ${TARGET_MS} ms: ${verdict(lazyMs <= TARGET_MS)}`,
        `the same, load: 'eager': ${fig(eager)} — target ≤ ${TARGET_MS} ms: ${verdict(eagerMs <= TARGET_MS)}`,
        `baseline: reading and parsing the document's JSON: ${fig(parse)} → a lazy load is ${(lazyMs / median(parse.map((s) => s.load))).toFixed(1)}× that`,
        `first argument check of a tool (compiles its validator): median ${median(lazy.map((s) => s.firstPrepare!)).toFixed(1)} ms`,
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await runIfMain(import.meta.url, benchOpenApiLoad);
