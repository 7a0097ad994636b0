import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPluginHost, watchFiles, type PluginEvent, type PluginHost } from '../../src/plugins/index.js';
import { createRegistry, type Registry } from '../../src/registry/index.js';
import { ctx, manifest, removeDir, tempDir, waitFor, writeFiles } from '../fixtures/plugins/helpers.js';

// A real chokidar watcher on real temporary folders; every wait polls for the expected state.

let root: string;
let registry: Registry;
let host: PluginHost;
let events: PluginEvent[];

const handler = (value: string) => `export default () => ${JSON.stringify(value)};\n`;

async function call(name: string): Promise<unknown> {
  const tool = registry.current().get(name);
  if (!tool) return undefined;
  return tool.invoke({}, ctx());
}

async function start(): Promise<void> {
  host = createPluginHost({ dir: root, registry, watch: true, debounceMs: 30, onEvent: (e) => events.push(e) });
  await host.ready;
}

beforeEach(async () => {
  root = await tempDir();
  registry = createRegistry();
  events = [];
  await writeFiles(root, { 'geo/plugin.yaml': manifest('geo', '1.0.0', ['where']), 'geo/tools/where.ts': handler('v1') });
  await start();
});

afterEach(async () => {
  await host.close();
  await removeDir(root);
});

describe('hot reload', () => {
  it('picks up an edited handler', async () => {
    expect(await call('where')).toBe('v1');
    await writeFile(join(root, 'geo/tools/where.ts'), handler('v2'));
    await waitFor(async () => (await call('where')) === 'v2');
  });

  it('keeps the old version when a change breaks, and activates the fix', async () => {
    await writeFile(join(root, 'geo/tools/where.ts'), 'export default () => {{{ broken');
    await waitFor(() => events.some((e) => e.type === 'plugin:error'));
    expect(await call('where')).toBe('v1');
    expect(host.plugins()[0]).toMatchObject({ status: 'active', stale: true, version: '1.0.0' });
    expect(host.plugins()[0]!.diagnostics[0]!.code).toBe('HANDLER_LOAD');

    await writeFile(join(root, 'geo/plugin.yaml'), 'name: geo\nversion: 1.1.0\ntools:\n  - name: where\n    paramters: {}\n');
    await waitFor(() => host.plugins()[0]!.diagnostics.some((d) => d.code === 'UNKNOWN_KEY'));
    expect(await call('where')).toBe('v1');

    await writeFile(join(root, 'geo/plugin.yaml'), manifest('geo', '1.1.0', ['where']));
    await writeFile(join(root, 'geo/tools/where.ts'), handler('fixed'));
    await waitFor(async () => (await call('where')) === 'fixed');
    expect(host.plugins()[0]).toMatchObject({ status: 'active', stale: false, version: '1.1.0', diagnostics: [] });
  });

  it('adds a new plugin folder and removes a deleted one', async () => {
    await writeFiles(root, { 'clock/tools/now.js': handler('tick'), 'clock/plugin.yaml': manifest('clock', '0.1.0', ['now']) });
    await waitFor(async () => (await call('now')) === 'tick');
    expect(events.some((e) => e.type === 'plugin:loaded' && e.plugin === 'clock')).toBe(true);

    await rm(join(root, 'geo'), { recursive: true });
    await waitFor(() => registry.current().get('where') === undefined);
    expect(registry.current().formerProvider('where')).toBe('geo');
    await waitFor(() => events.some((e) => e.type === 'plugin:removed' && e.plugin === 'geo'));
    expect(host.plugins().map((p) => p.name)).toEqual(['clock']);
  });

  it('adds and removes tools when the manifest changes', async () => {
    await writeFiles(root, { 'geo/tools/extra.ts': handler('extra') });
    await writeFile(join(root, 'geo/plugin.yaml'), manifest('geo', '1.0.1', ['where', 'extra']));
    await waitFor(async () => (await call('geo/extra')) === 'extra');
    await writeFile(join(root, 'geo/plugin.yaml'), manifest('geo', '1.0.2', ['extra']));
    await waitFor(() => !registry.current().has('where'));
    expect(registry.current().formerProvider('where')).toBe('geo');
  });

  it('handles an atomic save (write a temp file, rename it over)', async () => {
    const target = join(root, 'geo/tools/where.ts');
    await writeFile(`${target}.tmp-123`, handler('atomic'));
    await rename(`${target}.tmp-123`, target);
    await waitFor(async () => (await call('where')) === 'atomic');
    // …and an editor that unlinks first, then writes.
    await rm(target);
    await writeFile(target, handler('unlink-then-add'));
    await waitFor(async () => (await call('where')) === 'unlink-then-add');
    expect(host.plugins()[0]!.status).toBe('active');
  });

  it('ends a burst of 100 writes in one consistent version', async () => {
    for (let i = 1; i <= 100; i++) {
      await writeFile(join(root, 'geo/tools/where.ts'), handler(`burst-${i}`));
      await writeFile(join(root, 'geo/plugin.yaml'), manifest('geo', `2.0.${i}`, ['where']));
    }
    await waitFor(async () => (await call('where')) === 'burst-100', 10_000);
    await waitFor(() => host.plugins()[0]!.version === '2.0.100');
    expect(registry.current().get('where')!.version).toBe('2.0.100');
    // Far fewer loads than writes: the debounce coalesced them.
    expect(events.filter((e) => e.type === 'plugin:loaded').length).toBeLessThan(50);
  });

  it('lets a run that took its snapshot before a reload keep calling the old handler', async () => {
    const snapshot = registry.current(); // what a run holds for its whole life
    await writeFile(join(root, 'geo/tools/where.ts'), handler('new'));
    await waitFor(async () => (await call('where')) === 'new');
    await expect(snapshot.get('where')!.invoke({}, ctx())).resolves.toBe('v1');
    expect(registry.current().version).toBeGreaterThan(snapshot.version);
  });

  it('reloads when a module the handler imports changes', async () => {
    await writeFiles(root, { 'geo/tools/lib.ts': 'export const value = "lib-1";\n' });
    await writeFile(join(root, 'geo/tools/where.ts'), 'import { value } from "./lib.js";\nexport default () => value;\n');
    await waitFor(async () => (await call('where')) === 'lib-1');
    await writeFile(join(root, 'geo/tools/lib.ts'), 'export const value = "lib-2";\n');
    await waitFor(async () => (await call('where')) === 'lib-2');
  });
});

describe('watchFiles', () => {
  it('debounces a burst into few deliveries, grouped', async () => {
    const seen: { key: string; paths: readonly string[] }[] = [];
    const watcher = watchFiles(root, { debounceMs: 100, groupBy: (rel) => rel.split('/')[0] }, (c) => {
      seen.push(c);
    });
    await watcher.ready;
    try {
      for (let i = 0; i < 20; i++) await writeFile(join(root, 'geo', 'notes.txt'), `n${i}`);
      await writeFile(join(root, 'other.txt'), 'x');
      await waitFor(() => seen.some((s) => s.key === 'other.txt') && seen.some((s) => s.key === 'geo'));
      await new Promise((r) => setTimeout(r, 200));
      expect(seen.filter((s) => s.key === 'other.txt')).toHaveLength(1);
      expect(seen.filter((s) => s.key === 'geo').length).toBeLessThan(5);
      expect(seen.find((s) => s.key === 'geo')!.paths).toEqual([join(root, 'geo', 'notes.txt')]);
    } finally {
      await watcher.close();
    }
  });
});
