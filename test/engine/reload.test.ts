import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { manifest, removeDir, tempDir, waitFor, writeFiles } from '../fixtures/plugins/helpers.js';

// Hot reload seen through the engine a user holds: a real watcher on real folders.

const CHAIN = 'name: ask\nsteps:\n  - name: a\n    tool: answer\n';

async function project(handler: string): Promise<string> {
  const root = await tempDir('toolchain-engine-reload-');
  await writeFiles(root, {
    'chains/ask.yaml': CHAIN,
    'plugins/oracle/plugin.yaml': manifest('oracle', '1.0.0', ['answer']),
    'plugins/oracle/tools/answer.ts': handler,
  });
  return root;
}

describe('an engine with watch: true', () => {
  let engine: Engine | undefined;
  let root: string | undefined;
  afterEach(async () => {
    await engine?.close();
    if (root) await removeDir(root);
  });

  it('keeps the tool versions a run started with, and later runs get the new ones', async () => {
    root = await project(`export default async (_args: unknown, ctx: { signal: AbortSignal }) => {
  await new Promise((r) => setTimeout(r, 400));
  return { version: 1 };
};`);
    engine = await createEngine({ chainsDir: join(root, 'chains'), pluginsDir: join(root, 'plugins'), watch: true });
    const inFlight = engine.run('ask', {});
    await new Promise((r) => setTimeout(r, 50));
    await writeFile(join(root, 'plugins/oracle/tools/answer.ts'), 'export default async () => ({ version: 2 });\n');
    await waitFor(async () => ((await engine!.run('ask', {})).outputs as { version?: number } | null)?.version === 2, 10_000);
    expect((await inFlight).outputs).toEqual({ version: 1 });
  });

  it('fails runs of a chain whose plugin was removed with TOOL_NOT_FOUND, naming the plugin', async () => {
    root = await project('export default async () => ({ ok: true });\n');
    engine = await createEngine({ chainsDir: join(root, 'chains'), pluginsDir: join(root, 'plugins'), watch: true });
    expect((await engine.run('ask', {})).outputs).toEqual({ ok: true });
    await rm(join(root, 'plugins', 'oracle'), { recursive: true });
    const result = await waitFor(async () => {
      const r = await engine!.run('ask', {});
      return r.status === 'failed' ? r : undefined;
    }, 10_000);
    expect(result?.error).toMatchObject({ code: 'TOOL_NOT_FOUND', message: expect.stringContaining("plugin 'oracle'") });
  });
});

describe("an engine with load: 'lazy' (what toolchain run uses)", () => {
  it('imports a handler on its first call, and a module that fails to load fails that call', async () => {
    const root = await tempDir('toolchain-engine-lazy-');
    await writeFiles(root, {
      'chains/ask.yaml': CHAIN,
      'chains/broken.yaml': 'name: broken\nsteps:\n  - name: a\n    tool: explode\n',
      'plugins/oracle/plugin.yaml': manifest('oracle', '1.0.0', ['answer', 'explode']),
      'plugins/oracle/tools/answer.ts': 'globalThis.__oracleLoads = (globalThis.__oracleLoads ?? 0) + 1;\nexport default async () => ({ ok: true });\n',
      'plugins/oracle/tools/explode.ts': "throw new Error('boom at import');\n",
    });
    const engine = await createEngine({ chainsDir: join(root, 'chains'), pluginsDir: join(root, 'plugins'), load: 'lazy' });
    try {
      const loads = (): unknown => (globalThis as { __oracleLoads?: number }).__oracleLoads;
      expect(loads()).toBeUndefined();
      expect((await engine.run('ask', {})).outputs).toEqual({ ok: true });
      expect((await engine.run('ask', {})).outputs).toEqual({ ok: true });
      expect(loads()).toBe(1);
      const broken = await engine.run('broken', {});
      expect(broken.error).toMatchObject({ code: 'HANDLER_LOAD', message: expect.stringContaining('boom at import') });
    } finally {
      await engine.close();
      await removeDir(root);
    }
  });

  it('a schema the meta-schema accepts but the validator cannot compile fails its calls, not the engine', async () => {
    const engine = await createEngine({ load: 'lazy', cache: 'off' });
    try {
      // A reference to a definition that does not exist: a string to the meta-schema, an error to Ajv.
      // (A pattern no linear-time engine runs is refused earlier, when the tool is registered.)
      const bad = { $ref: '#/$defs/missing' };
      engine.registerTool({ name: 'args', parameters: { type: 'object', properties: { s: bad } }, handler: () => ({ s: 'x' }) });
      engine.registerTool({ name: 'result', returns: { type: 'object', properties: { s: bad } }, handler: () => ({ s: 'x' }) });
      engine.addChain('name: a\nsteps:\n  - name: a\n    tool: args\n    input_map: { s: x }\n');
      engine.addChain('name: r\nsteps:\n  - name: r\n    tool: result\n');
      for (const chain of ['a', 'a', 'r', 'r']) {
        const result = await engine.run(chain);
        expect(result.status).toBe('failed');
        expect(result.error).toMatchObject({ code: 'PLUGIN_INVALID', message: expect.stringMatching(/not a schema the validator can compile: can't resolve reference/) });
      }
    } finally {
      await engine.close();
    }
  });
});
