import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createPluginHost, listPluginFolders, loadPlugin } from '../../src/plugins/index.js';
import { createRegistry } from '../../src/registry/index.js';

// Every plugin shipped in the repository's plugins/ folder: manifest valid, every handler loads,
// every schema compiles, and all of them active together (requirements met, no clashes).

const pluginsDir = fileURLToPath(new URL('../../plugins', import.meta.url));
const shipped = await listPluginFolders(pluginsDir);

describe('shipped plugins', () => {
  it('are found: every folder of plugins/ with a plugin.yaml', async () => {
    const entries = await readdir(pluginsDir, { withFileTypes: true }).catch(() => []);
    const folders = entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
    // A folder without a manifest is a mistake, not a plugin to skip silently.
    expect(shipped).toEqual(folders.sort());
  });

  it.each(shipped)('%s loads: manifest, handlers and schemas', async (folder) => {
    const load = await loadPlugin(join(pluginsDir, folder));
    const problems = load.ok ? load.plugin.warnings : load.diagnostics;
    expect(problems.filter((d) => d.severity === 'error')).toEqual([]);
    expect(load.ok).toBe(true);
    if (!load.ok) return;
    const registry = createRegistry();
    const { tools } = registry.setPluginTools(load.plugin.name, load.plugin.version, load.plugin.tools, load.plugin.env);
    expect(tools.map((t) => t.name)).toEqual(load.plugin.tools.map((t) => t.name));
    for (const tool of tools) {
      expect(tool.description, `${tool.qualifiedName} should describe itself for people and models`).not.toBe('');
      expect(() => tool.prepare({})).not.toThrow();
    }
  });

  it('are all active together', async () => {
    const host = createPluginHost({ dir: pluginsDir, registry: createRegistry() });
    await host.ready;
    const statuses = host.plugins();
    expect(statuses.map((s) => [s.name, s.status, s.diagnostics.filter((d) => d.severity === 'error')])).toEqual(
      statuses.map((s) => [s.name, 'active', []]),
    );
    expect(statuses).toHaveLength(shipped.length);
    await host.close();
  });
});
