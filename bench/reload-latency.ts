// Hot reload latency: from the moment a handler file is written to the moment the new
// version answers a call through the registry, with a real watcher (median over 20 reloads,
// target ≤ 300 ms). Baseline: the same reload done directly (loadPlugin + swap), no watcher.

import { rm } from 'node:fs/promises';
import { createPluginHost } from '../src/plugins/index.js';
import { createRegistry, type Registry } from '../src/registry/index.js';
import { median, percentile, runIfMain, verdict, type BenchResult } from './harness.js';
import { makePluginsDir, writeHandler, writeVersion } from './reload-fixture.js';

const ctx = { signal: new AbortController().signal, attempt: 1, run_id: 'bench', step: 's', log: () => undefined, env: {}, idempotencyKey: 'bench:s' };

async function answers(registry: Registry, n: number): Promise<boolean> {
  const tool = registry.current().get('where');
  if (!tool) return false;
  const result = (await tool.invoke({ text: 'in Osaka' }, ctx)) as { version: number };
  return result.version === n;
}

async function until(cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error('reload did not arrive in time');
    await new Promise((r) => setTimeout(r, 1));
  }
}

export async function benchReloadLatency(): Promise<BenchResult> {
  const { root, plugin } = await makePluginsDir();
  const registry = createRegistry();
  const host = createPluginHost({ dir: root, registry, watch: true });
  await host.ready;
  const watched: number[] = [];
  try {
    for (let n = 1; n <= 25; n++) {
      // Space the edits like a person saving: the previous one has settled.
      await new Promise((r) => setTimeout(r, 120));
      const start = performance.now();
      await writeHandler(plugin, n);
      await until(() => answers(registry, n), 5_000);
      if (n > 5) watched.push(performance.now() - start);
    }
  } finally {
    await host.close();
  }

  // Baseline: the same load and swap, started by hand.
  const direct: number[] = [];
  const plain = createPluginHost({ dir: root, registry: createRegistry() });
  await plain.ready;
  for (let n = 100; n < 120; n++) {
    await writeVersion(plugin, n);
    const start = performance.now();
    await plain.reload();
    direct.push(performance.now() - start);
  }
  await plain.close();
  await rm(root, { recursive: true, force: true });

  const p50 = median(watched);
  return {
    name: 'plugin reload latency',
    lines: [
      `file write → new version answering (watcher, 50 ms debounce): ${p50.toFixed(0)} ms median, p90 ${percentile(watched, 90).toFixed(0)} ms ` +
        `over ${watched.length} reloads (target ≤ 300 ms: ${verdict(p50 <= 300)})`,
      `baseline: the same reload started directly (load + swap, no watcher): ${median(direct).toFixed(1)} ms median → ` +
        `${(p50 - median(direct)).toFixed(0)} ms is watching and debouncing`,
    ],
  };
}

await runIfMain(import.meta.url, benchReloadLatency);
