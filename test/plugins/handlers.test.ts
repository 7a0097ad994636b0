import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildPlugin, loadPlugin } from '../../src/plugins/index.js';
import { createRegistry } from '../../src/registry/index.js';
import { contextFor } from '../fixtures/call/call-helpers.js';
import { removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await removeDir(root);
});

async function loadAndCall(folder: string, tool: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const load = await loadPlugin(join(root, folder));
  if (!load.ok) throw new Error(load.diagnostics.map((d) => `${d.code} ${d.message}`).join('\n'));
  const registry = createRegistry({ env: { SECRET: 's3cret', OTHER: 'no' } });
  registry.setPluginTools(load.plugin.name, load.plugin.version, load.plugin.tools, load.plugin.env);
  const found = registry.current().get(tool)!;
  const prepared = found.prepare(args);
  if (!prepared.ok) throw new Error(JSON.stringify(prepared.problems));
  return found.invoke(prepared.args, contextFor(found));
}

describe('handler modules', () => {
  it('loads TypeScript with types and local imports, no build step', async () => {
    await writeFiles(root, {
      'geo/plugin.yaml': 'name: geo\nversion: 1.0.0\nenv: [SECRET]\ntools:\n  - name: find_city\n',
      'geo/tools/find_city.ts': `import type { Helper } from './lib.js';
import { upper } from './lib.js';
interface Args { text?: string }
const greeting: Helper = { prefix: 'city:' };
export default async function findCity(args: Args, ctx: { env: Record<string, string | undefined> }): Promise<{ city: string; key?: string }> {
  return { city: greeting.prefix + upper(args.text ?? 'osaka'), key: ctx.env.SECRET };
}
`,
      'geo/tools/lib.ts': 'export interface Helper { prefix: string }\nexport const upper = (s: string): string => s.toUpperCase();\n',
    });
    await expect(loadAndCall('geo', 'find_city')).resolves.toEqual({ city: 'city:OSAKA', key: 's3cret' });
  });

  it('imports ES-module packages of its own, with and without top-level await, as default and named imports', async () => {
    await writeFiles(root, {
      'p/plugin.yaml': 'name: p\nversion: 1.0.0\ntools:\n  - name: both\n',
      'p/tools/both.ts': `import shout, { suffix } from 'esm-only';
import settle, { ready } from 'esm-awaits';
export default async () => ({ said: shout('hi') + suffix, settled: settle(), ready });
`,
      'p/node_modules/esm-only/package.json': '{ "name": "esm-only", "type": "module", "exports": "./index.js" }',
      'p/node_modules/esm-only/index.js': 'export default (s) => s.toUpperCase();\nexport const suffix = "!";\n',
      'p/node_modules/esm-awaits/package.json': '{ "name": "esm-awaits", "type": "module", "exports": "./index.js" }',
      'p/node_modules/esm-awaits/index.js': 'export const ready = await Promise.resolve("awaited");\nexport default () => "settled";\n',
    });
    await expect(loadAndCall('p', 'both')).resolves.toEqual({ said: 'HI!', settled: 'settled', ready: 'awaited' });
  });

  it('loads a .js file with export syntax and no package.json, in a folder outside any package', async () => {
    await writeFiles(root, {
      'p/plugin.yaml': 'name: p\nversion: 1.0.0\ntools:\n  - name: clock\n',
      'p/tools/clock.js': 'export default async () => ({ kind: "esm-js", top: await Promise.resolve(1) });\n',
    });
    await expect(loadAndCall('p', 'clock')).resolves.toEqual({ kind: 'esm-js', top: 1 });
  });

  it('loads ESM .js even when the folder’s package.json says commonjs, and CommonJS .js too', async () => {
    await writeFiles(root, {
      'p/package.json': '{ "type": "commonjs" }',
      'p/plugin.yaml': 'name: p\nversion: 1.0.0\ntools:\n  - name: a\n  - name: b\n',
      'p/tools/a.js': 'export const a = () => "esm";\n',
      'p/tools/b.js': 'const path = require("node:path");\nmodule.exports = () => "cjs" + path.sep;\n',
    });
    await expect(loadAndCall('p', 'a')).resolves.toBe('esm');
    await expect(loadAndCall('p', 'b')).resolves.toBe('cjs/');
  });

  it('loads .cjs and .mjs, and named exports with file#export', async () => {
    await writeFiles(root, {
      'p/package.json': '{ "type": "module" }',
      'p/plugin.yaml': `name: p
version: 1.0.0
tools:
  - name: c
  - name: m
  - name: named
    handler: lib/many.mjs#second
  - name: shortcut
    handler: lib/many
`,
      'p/tools/c.cjs': 'const helper = require("./helper.cjs");\nexports.c = () => "cjs:" + helper.value;\n',
      'p/tools/helper.cjs': 'module.exports = { value: 7 };\n',
      'p/tools/m.mjs': 'export default function () { return "mjs"; }\n',
      'p/lib/many.mjs': 'export const first = () => 1;\nexport const second = () => 2;\nexport function shortcut() { return "by tool name"; }\n',
    });
    await expect(loadAndCall('p', 'c')).resolves.toBe('cjs:7');
    await expect(loadAndCall('p', 'm')).resolves.toBe('mjs');
    await expect(loadAndCall('p', 'named')).resolves.toBe(2);
    await expect(loadAndCall('p', 'shortcut')).resolves.toBe('by tool name');
  });

  it('reports a missing export, a missing file and a module that throws on import as HANDLER_LOAD', async () => {
    await writeFiles(root, {
      'p/plugin.yaml': `name: p
version: 1.0.0
tools:
  - name: nothing
  - name: wrong_export
    handler: tools/x.ts#nope
  - name: throws
  - name: syntax
`,
      'p/tools/x.ts': 'export const yes = () => 1;\n',
      'p/tools/throws.ts': 'throw new Error("cannot start: no database");\n',
      'p/tools/syntax.ts': 'export default (a: number => a;\n',
    });
    const load = await loadPlugin(join(root, 'p'));
    // Each broken tool is left out on its own; the plugin itself loads.
    expect(load.ok).toBe(true);
    if (!load.ok) return;
    const failed = load.plugin.failedTools.map((f) => f.diagnostic);
    const byPointer = Object.fromEntries(failed.map((d) => [d.pointer, d]));
    expect(byPointer['/tools/0']).toMatchObject({ code: 'HANDLER_LOAD', line: 4 });
    expect(byPointer['/tools/0']!.message).toContain('tools/nothing.ts');
    expect(byPointer['/tools/1/handler']).toMatchObject({ code: 'HANDLER_LOAD' });
    expect(byPointer['/tools/1/handler']!.message).toContain("'nope'");
    expect(byPointer['/tools/1/handler']!.message).toContain('yes');
    expect(byPointer['/tools/2']!.message).toContain('cannot start: no database');
    expect(byPointer['/tools/3']!.code).toBe('HANDLER_LOAD');
  });

  it('refuses handler paths that leave the plugin folder: ../, absolute, and a symlink out', async () => {
    await writeFiles(root, {
      'outside.js': 'export default () => "pwned";\n',
      'p/plugin.yaml': `name: p
version: 1.0.0
tools:
  - name: up
    handler: ../outside.js
  - name: abs
    handler: ${join(root, 'outside.js')}
  - name: linked
    handler: tools/linked.js
  - name: sneaky
`,
    });
    await writeFiles(root, { 'p/tools/.keep': '' });
    await symlink(join(root, 'outside.js'), join(root, 'p', 'tools', 'linked.js'));
    await symlink(join(root, 'outside.js'), join(root, 'p', 'tools', 'sneaky.js'));
    const load = await loadPlugin(join(root, 'p'));
    // Each broken tool is left out on its own; the plugin itself loads.
    expect(load.ok).toBe(true);
    if (!load.ok) return;
    const failed = load.plugin.failedTools.map((f) => f.diagnostic);
    expect(failed.map((d) => [d.pointer, d.code])).toEqual([
      ['/tools/0/handler', 'HANDLER_ESCAPE'],
      ['/tools/1/handler', 'HANDLER_ESCAPE'],
      ['/tools/2/handler', 'HANDLER_ESCAPE'],
      ['/tools/3', 'HANDLER_ESCAPE'],
    ]);
  });

  it('allows a symlink that stays inside the folder', async () => {
    await writeFiles(root, {
      'p/plugin.yaml': 'name: p\nversion: 1.0.0\ntools:\n  - name: t\n',
      'p/impl/real.ts': 'export default () => "inside";\n',
    });
    await writeFiles(root, { 'p/tools/.keep': '' });
    await symlink(join(root, 'p', 'impl', 'real.ts'), join(root, 'p', 'tools', 't.ts'));
    await expect(loadAndCall('p', 't')).resolves.toBe('inside');
  });

  it('fails the load when a tool’s JSON Schema does not compile, placing it in the manifest', async () => {
    await writeFiles(root, {
      'p/plugin.yaml': 'name: p\nversion: 1.0.0\ntools:\n  - name: t\n    parameters:\n      type: objekt\n',
      'p/tools/t.ts': 'export default () => 1;\n',
    });
    const load = buildPlugin(createRegistry(), await loadPlugin(join(root, 'p')));
    expect(load.ok).toBe(false);
    expect(!load.ok && load.diagnostics[0]).toMatchObject({ code: 'PLUGIN_INVALID', pointer: '/tools/0/parameters', file: join(root, 'p', 'plugin.yaml'), line: 6 });
  });
});
