import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPluginHost, parseRequirement, resolveRequirements, type Candidate } from '../../src/plugins/index.js';
import { createRegistry } from '../../src/registry/index.js';
import { manifest, removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';

function candidate(name: string, version: string, requires: string[] = [], capabilities: string[] = []): Candidate {
  return {
    key: name,
    name,
    version,
    capabilities,
    requirements: requires.map((r) => {
      const parsed = parseRequirement(r);
      if (!parsed.ok) throw new Error(parsed.message);
      return parsed.requirement;
    }),
  };
}

function codes(resolution: Map<string, { code: string }[]>): Record<string, string[]> {
  return Object.fromEntries([...resolution].map(([k, v]) => [k, v.map((d) => d.code)]));
}

describe('requirement resolution', () => {
  it('accepts requirements by plugin name or capability, with ranges', () => {
    const result = resolveRequirements([
      candidate('geo', '1.2.0', ['text >= 1.0.0', 'clocks ^2.1', 'base']),
      candidate('text', '1.4.0'),
      candidate('timekeeper', '2.3.1', [], ['clocks']),
      candidate('base', '0.1.0'),
    ]);
    expect(codes(result)).toEqual({ geo: [], text: [], timekeeper: [], base: [] });
  });

  it('leaves a plugin inactive when a requirement is missing, with the closest name', () => {
    const result = resolveRequirements([candidate('geo', '1.0.0', ['txt']), candidate('text', '1.0.0')]);
    expect(codes(result)).toEqual({ geo: ['PLUGIN_REQUIREMENT'], text: [] });
    expect(result.get('geo')![0]!.message).toContain("'text'");
  });

  it('places the problem at the requirement it is about', () => {
    const [r] = candidate('geo', '1.0.0', ['text >= 2.0.0']).requirements;
    const placed = { ...candidate('geo', '1.0.0'), requirements: [{ ...r!, line: 7, col: 5 }] };
    const result = resolveRequirements([placed, candidate('text', '1.4.0')]);
    expect(result.get('geo')![0]).toMatchObject({ code: 'PLUGIN_REQUIREMENT', line: 7, col: 5 });
  });

  it('leaves a plugin inactive when the version does not match, saying which is there', () => {
    const result = resolveRequirements([candidate('geo', '1.0.0', ['text >= 2.0.0']), candidate('text', '1.4.0')]);
    expect(result.get('geo')![0]).toMatchObject({ code: 'PLUGIN_REQUIREMENT' });
    expect(result.get('geo')![0]!.message).toContain('text 1.4.0');
  });

  it('finds cycles and takes their dependents down with them', () => {
    const result = resolveRequirements([
      candidate('a', '1.0.0', ['b']),
      candidate('b', '1.0.0', ['c']),
      candidate('c', '1.0.0', ['a']),
      candidate('d', '1.0.0', ['a']),
      candidate('e', '1.0.0'),
    ]);
    expect(codes(result)).toEqual({ a: ['PLUGIN_CYCLE'], b: ['PLUGIN_CYCLE'], c: ['PLUGIN_CYCLE'], d: ['PLUGIN_REQUIREMENT'], e: [] });
    expect(result.get('a')![0]!.message).toMatch(/(a|b|c) → (a|b|c) → (a|b|c) → (a|b|c)/);
  });

  it('finds a requirement cycle through 20,000 plugins, naming a short path in each message', () => {
    const n = 20_000;
    const result = resolveRequirements(Array.from({ length: n }, (_, i) => candidate(`p${i}`, '1.0.0', [`p${(i + 1) % n}`])));
    expect([...result.values()].every((d) => d.length === 1 && d[0]!.code === 'PLUGIN_CYCLE')).toBe(true);
    const message = result.get('p0')![0]!.message;
    expect(message.length).toBeLessThan(400);
    // The search starts where Tarjan's closes the component: p0, round through every plugin.
    expect(message).toBe("plugin 'p0' is on a requirement cycle: p0 → p1 → p2 → p3 → p4 → p5 → p6 → p7 → p8 → p9 → … 19981 more … → p19991 → p19992 → p19993 → p19994 → p19995 → p19996 → p19997 → p19998 → p19999 → p0");
  });

  it('reports a second plugin with the same name as PLUGIN_DUPLICATE; the first keeps it', () => {
    const first = { ...candidate('geo', '1.0.0'), key: 'geo-a' };
    const second = { ...candidate('geo', '2.0.0'), key: 'geo-b' };
    expect(codes(resolveRequirements([first, second]))).toEqual({ 'geo-a': [], 'geo-b': ['PLUGIN_DUPLICATE'] });
  });

  it('propagates inactivity along chains of dependents', () => {
    const result = resolveRequirements([candidate('a', '1.0.0', ['missing']), candidate('b', '1.0.0', ['a']), candidate('c', '1.0.0', ['b'])]);
    expect(codes(result)).toEqual({ a: ['PLUGIN_REQUIREMENT'], b: ['PLUGIN_REQUIREMENT'], c: ['PLUGIN_REQUIREMENT'] });
  });
});

describe('requirements in the plugin host', () => {
  let root: string;
  beforeEach(async () => {
    root = await tempDir();
  });
  afterEach(async () => {
    await removeDir(root);
  });

  const tool = (name: string, value: string) => ({ [`tools/${name}.ts`]: `export default () => ${JSON.stringify(value)};\n` });
  const plugin = (folder: string, yaml: string, files: Record<string, string>) =>
    writeFiles(join(root, folder), { 'plugin.yaml': yaml, ...files });

  it('takes dependents of a removed or broken plugin down and brings them back', async () => {
    await plugin('text', manifest('text', '1.0.0', ['split'], 'capabilities: [words]\n'), tool('split', 'v1'));
    await plugin('geo', manifest('geo', '1.0.0', ['find'], 'requires: [text ^1.0.0]\n'), tool('find', 'geo'));
    await plugin('news', manifest('news', '1.0.0', ['read'], 'requires: [words]\n'), tool('read', 'news'));
    const registry = createRegistry();
    const host = createPluginHost({ dir: root, registry });
    await host.ready;
    expect(host.plugins().map((p) => [p.name, p.status])).toEqual([['geo', 'active'], ['news', 'active'], ['text', 'active']]);

    // Removed: dependents go inactive, and say why.
    await rm(join(root, 'text'), { recursive: true });
    await host.reload();
    expect(host.plugins().map((p) => [p.name, p.status])).toEqual([['geo', 'inactive'], ['news', 'inactive']]);
    expect(registry.current().has('find')).toBe(false);
    expect(registry.current().formerProvider('geo/find')).toBe('geo');
    expect(host.plugins()[0]!.diagnostics[0]).toMatchObject({ code: 'PLUGIN_REQUIREMENT' });

    // Back: they come back with it.
    await plugin('text', manifest('text', '1.1.0', ['split'], 'capabilities: [words]\n'), tool('split', 'v2'));
    await host.reload();
    expect(host.plugins().map((p) => p.status)).toEqual(['active', 'active', 'active']);
    expect(registry.current().has('geo/find')).toBe(true);

    // A version that no longer satisfies the range: geo goes inactive, news (any version) stays.
    await writeFiles(join(root, 'text'), { 'plugin.yaml': manifest('text', '2.0.0', ['split'], 'capabilities: [words]\n') });
    await host.reload();
    expect(host.plugins().map((p) => [p.name, p.status])).toEqual([['geo', 'inactive'], ['news', 'active'], ['text', 'active']]);
    await host.close();
  });

  it('keeps dependents active when the plugin they need fails to reload (its last good version serves)', async () => {
    await plugin('text', manifest('text', '1.0.0', ['split']), tool('split', 'v1'));
    await plugin('geo', manifest('geo', '1.0.0', ['find'], 'requires: [text]\n'), tool('find', 'geo'));
    const host = createPluginHost({ dir: root, registry: createRegistry() });
    await host.ready;
    await writeFiles(join(root, 'text'), { 'plugin.yaml': 'name: text\nversion: [\n' });
    await host.reload();
    const [geo, text] = host.plugins();
    expect(geo!.status).toBe('active');
    expect(text).toMatchObject({ status: 'active', stale: true, version: '1.0.0' });
    expect(text!.diagnostics[0]!.code).toBe('YAML_SYNTAX');
    await host.close();
  });

  it('reports duplicate plugin names and cycles through the host', async () => {
    await plugin('geo-a', manifest('geo', '1.0.0', ['a']), tool('a', 'A'));
    await plugin('geo-b', manifest('geo', '1.1.0', ['b']), tool('b', 'B'));
    await plugin('x', manifest('x', '1.0.0', ['x1'], 'requires: [y]\n'), tool('x1', 'x'));
    await plugin('y', manifest('y', '1.0.0', ['y1'], 'requires: [x]\n'), tool('y1', 'y'));
    const events: string[] = [];
    const host = createPluginHost({ dir: root, registry: createRegistry(), onEvent: (e) => events.push(`${e.type} ${e.plugin}`) });
    await host.ready;
    const status = Object.fromEntries(host.plugins().map((p) => [p.dir.slice(root.length + 1), [p.status, p.diagnostics.map((d) => d.code)]]));
    expect(status).toEqual({
      'geo-a': ['active', []],
      'geo-b': ['inactive', ['PLUGIN_DUPLICATE']],
      x: ['inactive', ['PLUGIN_CYCLE']],
      y: ['inactive', ['PLUGIN_CYCLE']],
    });
    expect(events).toEqual(['plugin:loaded geo', 'plugin:inactive geo', 'plugin:inactive x', 'plugin:inactive y']);
    await host.close();
  });
});
