// Memory across hot reloads: 1,000 reloads of one plugin — manifest and TypeScript
// handler rewritten each time, loaded, compiled, swapped into the registry and called — must grow
// RSS by ≤ 50 MB. Baseline: the obvious alternative, Node's own `import()` of the changed module
// under a new URL each time (`tool.mjs?v=2`), which the ESM loader never frees. Each side runs in
// a fresh process with --expose-gc, so the figures are not mixed with other benchmarks.

import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPluginHost } from '../src/plugins/index.js';
import { createRegistry } from '../src/registry/index.js';
import { runIfMain, verdict, type BenchResult } from './harness.js';
import { makePluginsDir, writeVersion } from './reload-fixture.js';

const CHILD_FLAG = '--reload-memory-child';
const RELOADS = 1000;
const WARMUP = 100;

interface Growth {
  readonly rssMb: number;
  readonly heapMb: number;
  readonly msPerReload: number;
}

const ctx = { signal: new AbortController().signal, attempt: 1, run_id: 'bench', step: 's', log: () => undefined, env: {}, idempotencyKey: 'bench:s' };

function settle(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
}

async function measure(reload: (n: number) => Promise<void>): Promise<Growth> {
  for (let n = 1; n <= WARMUP; n++) await reload(n);
  settle();
  const before = process.memoryUsage();
  const start = performance.now();
  for (let n = WARMUP + 1; n <= WARMUP + RELOADS; n++) await reload(n);
  const elapsed = performance.now() - start;
  settle();
  const after = process.memoryUsage();
  return { rssMb: (after.rss - before.rss) / 2 ** 20, heapMb: (after.heapUsed - before.heapUsed) / 2 ** 20, msPerReload: elapsed / RELOADS };
}

async function engineReloads(): Promise<Growth> {
  const { root, plugin } = await makePluginsDir();
  const registry = createRegistry();
  const host = createPluginHost({ dir: root, registry });
  await host.ready;
  try {
    return await measure(async (n) => {
      await writeVersion(plugin, n);
      await host.reload();
      const result = (await registry.current().get('where')!.invoke({ text: 'Kyoto' }, ctx)) as { version: number };
      if (result.version !== n) throw new Error(`reload ${n} answered ${result.version}`);
    });
  } finally {
    await host.close();
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * The baseline as a plain ES module script for `node -e`, so no loader (jiti when this file runs
 * as TypeScript) stands between it and Node's own import().
 */
const ESM_BASELINE = `
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const dir = mkdtempSync(join(tmpdir(), 'toolchain-esm-baseline-'));
const file = join(dir, 'tool.mjs');
const settle = () => { for (let i = 0; i < 3; i++) globalThis.gc(); };
const reload = async (n) => {
  writeFileSync(file, 'const VERSION = ' + n + ';\\nexport default async function where(args) { return { version: VERSION, text: args.text }; }\\n');
  const mod = await import(pathToFileURL(file).href + '?v=' + n);
  if ((await mod.default({ text: 'Kyoto' })).version !== n) throw new Error('stale module');
};
for (let n = 1; n <= ${WARMUP}; n++) await reload(n);
settle();
const before = process.memoryUsage();
const start = performance.now();
for (let n = ${WARMUP + 1}; n <= ${WARMUP + RELOADS}; n++) await reload(n);
const elapsed = performance.now() - start;
settle();
const after = process.memoryUsage();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ rssMb: (after.rss - before.rss) / 2 ** 20, heapMb: (after.heapUsed - before.heapUsed) / 2 ** 20, msPerReload: elapsed / ${RELOADS} }));
`;

/** Runs one side in a fresh process (through jiti when this file is TypeScript). */
function inChild(mode: 'engine' | 'esm'): Promise<Growth> {
  const self = fileURLToPath(import.meta.url);
  const viaJiti = self.endsWith('.ts') ? [join(createRequire(import.meta.url).resolve('jiti/package.json'), '..', 'lib', 'jiti-cli.mjs')] : [];
  const args = mode === 'esm' ? ['--input-type=module', '-e', ESM_BASELINE] : [...viaJiti, self, CHILD_FLAG, mode];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0) reject(new Error(`${mode} child exited with ${code}: ${out}`));
      else resolve(JSON.parse(line) as Growth);
    });
  });
}

export async function benchReloadMemory(): Promise<BenchResult> {
  const engine = await inChild('engine');
  const esm = await inChild('esm');
  const fmt = (g: Growth) => `RSS ${g.rssMb >= 0 ? '+' : ''}${g.rssMb.toFixed(1)} MB, heap ${g.heapMb >= 0 ? '+' : ''}${g.heapMb.toFixed(1)} MB, ${g.msPerReload.toFixed(1)} ms/reload`;
  return {
    name: 'plugin reload memory',
    lines: [
      `${RELOADS} reloads of one plugin (manifest + TypeScript handler rewritten, loaded, swapped, called): ${fmt(engine)} ` +
        `(target RSS ≤ 50 MB: ${verdict(engine.rssMb <= 50)})`,
      `baseline: ${RELOADS} native import()s of a changed .mjs under a new URL: ${fmt(esm)}`,
    ],
  };
}

const childMode = process.argv.indexOf(CHILD_FLAG);
if (childMode >= 0) {
  console.log(JSON.stringify(await engineReloads()));
} else {
  await runIfMain(import.meta.url, benchReloadMemory);
}
