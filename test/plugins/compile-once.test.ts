import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createPluginHost, inspectPlugins, listPluginFolders, readManifest } from '../../src/plugins/index.js';
import { createRegistry, createSchemaCompiler, type LoadMode, type SchemaUse } from '../../src/registry/index.js';
import { removeDir, tempDir, waitFor, writeFiles } from '../fixtures/plugins/helpers.js';

// A tool's validators compile once per tool version. The registry builds a plugin's
// tools once (buildPluginTools) and the host installs exactly what was built, however often
// requirements switch the plugin off and on; a lazy registry compiles a schema on its first use.

const shippedDir = fileURLToPath(new URL('../../plugins', import.meta.url));

/** A registry whose compiler (no disk cache) records every Ajv compile by schema object. */
function countingRegistry(load: LoadMode) {
  const compiles = new Map<object, SchemaUse[]>();
  const schemas = createSchemaCompiler({
    onCompile: ({ schema, use, from }) => {
      expect(from).toBe('ajv');
      compiles.set(schema, [...(compiles.get(schema) ?? []), use]);
    },
  });
  const total = (): number => [...compiles.values()].reduce((n, uses) => n + uses.length, 0);
  return { registry: createRegistry({ load, schemas }), compiles, total };
}

async function shippedSchemaCount(): Promise<number> {
  let count = 0;
  for (const folder of await listPluginFolders(shippedDir)) {
    const { manifest } = await readManifest(join(shippedDir, folder));
    // Every tool has parameters (a default when the manifest gives none); `returns` is optional.
    for (const tool of manifest?.tools ?? []) count += tool.returns === undefined ? 1 : 2;
  }
  return count;
}

describe('plugin schemas compile once', () => {
  it('eager: loading the shipped plugins compiles each schema exactly once', async () => {
    const { registry, compiles, total } = countingRegistry('eager');
    const host = createPluginHost({ dir: shippedDir, registry });
    await host.ready;
    expect(host.plugins().every((p) => p.status === 'active')).toBe(true);
    const expected = await shippedSchemaCount();
    expect(expected).toBeGreaterThanOrEqual(28);
    expect(total()).toBe(expected);
    for (const uses of compiles.values()) expect(uses).toHaveLength(1);
    // Installing and calling use what was built: nothing compiles again.
    for (const tool of registry.current().tools()) tool.prepare({});
    expect(total()).toBe(expected);
    await host.close();
  });

  it('a plugin switched off and on by its requirements is installed again without compiling', async () => {
    const root = await tempDir('toolchain-compile-once-');
    await writeFiles(root, {
      'base/plugin.yaml': 'name: base\nversion: 1.0.0\ntools:\n  - name: ping\n    parameters: { type: object }\n',
      'base/tools/ping.ts': 'export default () => "pong";\n',
      'user/plugin.yaml':
        'name: user\nversion: 1.0.0\nrequires: [base ^1]\ntools:\n' +
        '  - name: one\n    parameters: { type: object, properties: { a: { type: string } } }\n    returns: { type: string }\n' +
        '  - name: two\n    parameters: { type: object, properties: { b: { type: integer } } }\n',
      'user/tools/one.ts': 'export default () => "one";\n',
      'user/tools/two.ts': 'export default () => "two";\n',
    });
    const { registry, total } = countingRegistry('eager');
    const host = createPluginHost({ dir: root, registry, watch: true, debounceMs: 30 });
    try {
      await host.ready;
      const state = (name: string) => host.plugins().find((p) => p.name === name)?.status;
      expect(state('user')).toBe('active');
      expect(total()).toBe(4); // ping, one (parameters and returns), two

      await rename(join(root, 'base', 'plugin.yaml'), join(root, 'base', 'plugin.off'));
      await waitFor(() => state('user') === 'inactive');
      expect(registry.current().get('one')).toBeUndefined();

      await rename(join(root, 'base', 'plugin.off'), join(root, 'base', 'plugin.yaml'));
      await waitFor(() => state('user') === 'active');
      expect(registry.current().get('one')).toBeDefined();
      // base was read again (a new version: its one schema compiles), user was not rebuilt.
      expect(total()).toBe(5);
    } finally {
      await host.close();
      await removeDir(root);
    }
  });

  it('lazy: nothing compiles at load; a tool compiles its parameters on its first call, once', async () => {
    const { registry, total } = countingRegistry('lazy');
    const host = createPluginHost({ dir: shippedDir, registry });
    await host.ready;
    expect(registry.current().tools().length).toBeGreaterThan(10);
    expect(total()).toBe(0);
    const tool = registry.current().get('render_template')!;
    tool.prepare({ template: 'x' });
    tool.prepare({ template: 'y' });
    expect(total()).toBe(1);
    await host.close();
  });

  it("eager: an OpenAPI document's tools are meta-checked at load and compile on their first call", async () => {
    const root = await tempDir('toolchain-compile-openapi-');
    const doc = {
      openapi: '3.0.3',
      info: { title: 'x', version: '1' },
      servers: [{ url: 'https://api.example.com' }],
      paths: Object.fromEntries(
        ['a', 'b', 'c'].map((n) => [`/${n}`, { get: { operationId: n, parameters: [{ name: 'q', in: 'query', schema: { type: 'string' } }], responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } } } }]),
      ),
    };
    await writeFiles(root, { 'api/plugin.yaml': 'name: api\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ./doc.json\n', 'api/doc.json': JSON.stringify(doc) });
    const { registry, total } = countingRegistry('eager');
    const host = createPluginHost({ dir: root, registry });
    try {
      await host.ready;
      expect(registry.current().tools().map((t) => t.qualifiedName)).toEqual(['api/a', 'api/b', 'api/c']);
      expect(total()).toBe(0);
      const tool = registry.current().get('api/b')!;
      expect(tool.prepare({ q: 'x' }).ok).toBe(true);
      expect(tool.prepare({ q: 'y' }).ok).toBe(true);
      expect(total()).toBe(1);
    } finally {
      await host.close();
      await removeDir(root);
    }
  });

  it('static (validate): no handler imported, and a schema that is not JSON Schema is still refused in place', async () => {
    const root = await tempDir('toolchain-compile-static-');
    await writeFiles(root, {
      'p/plugin.yaml': 'name: p\nversion: 1.0.0\ntools:\n  - name: t\n    parameters:\n      type: objekt\n',
      'p/tools/t.ts': 'globalThis.__staticImported = true;\nexport default () => 1;\n',
    });
    try {
      const { plugins } = await inspectPlugins(root);
      expect(plugins[0]).toMatchObject({ status: 'error', diagnostics: [expect.objectContaining({ code: 'PLUGIN_INVALID', pointer: '/tools/0/parameters', line: 6 })] });
      expect((globalThis as { __staticImported?: boolean }).__staticImported).toBeUndefined();
    } finally {
      await removeDir(root);
    }
  });
});
