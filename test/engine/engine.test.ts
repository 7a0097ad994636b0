import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import { createRegistry } from '../../src/registry/index.js';

const CLI = join(import.meta.dirname, '..', 'fixtures', 'executor', 'cli');

describe('createEngine', () => {
  it('loads chains from chainsDir and tools from pluginsDir, and runs them', async () => {
    const engine = await createEngine({ chainsDir: join(CLI, 'chains'), pluginsDir: join(CLI, 'plugins') });
    try {
      expect(engine.chains().map((c) => c.name).sort()).toEqual(['broken', 'danger', 'gap', 'ghost', 'slow', 'sum']);
      expect(engine.tools().has('demo/add')).toBe(true);
      const result = await engine.run('sum', { a: 2 });
      expect(result).toMatchObject({ status: 'succeeded', chain: 'sum', outputs: { total: 13 } });
      expect(result.steps).toMatchObject({ first: { status: 'succeeded', attempts: 1 }, second: { status: 'succeeded', attempts: 1 } });
      const ghost = await engine.run('ghost', {});
      expect(ghost.error).toMatchObject({ code: 'TOOL_NOT_FOUND' });
    } finally {
      await engine.close();
    }
  });

  it('a tool registered from code after start makes a chain runnable', async () => {
    const engine = await createEngine({ chainsDir: join(CLI, 'chains') });
    expect((await engine.run('ghost', {})).error?.code).toBe('TOOL_NOT_FOUND');
    engine.registerTool({ name: 'not_installed', handler: async () => ({ here: true }) });
    expect((await engine.run('ghost', {})).outputs).toEqual({ here: true });
    await engine.close();
  });

  it('reloads chains; a broken edit keeps the last good version', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-engine-'));
    await cp(join(CLI, 'chains', 'sum.yaml'), join(dir, 'sum.yaml'));
    const engine = await createEngine({ chainsDir: dir, pluginsDir: join(CLI, 'plugins') });
    await writeFile(join(dir, 'sum.yaml'), 'name: sum\nsteps: [');
    await engine.reloadChains();
    expect(engine.diagnostics().length).toBeGreaterThan(0);
    expect((await engine.run('sum', { a: 1 })).outputs).toEqual({ total: 12 });
    await engine.close();
  });

  it("keeps a queue worker's element calls off the engine it hands out", async () => {
    // A distributed for_each element is run for another worker's run: only createWorker reaches it (openEngine).
    const engine = await createEngine({ cache: 'off' });
    try {
      expect('callElement' in engine).toBe(false);
    } finally {
      await engine.close();
    }
  });

  it('checks its options up front', async () => {
    await expect(createEngine({ concurrency: 0 })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining("'concurrency'") });
    const usage = (text: string) => ({ code: 'USAGE', message: expect.stringContaining(text) });
    await expect(createEngine({ load: 'static' as 'lazy' })).rejects.toMatchObject(usage(`option 'load' must be 'eager' or 'lazy', got "static"`));
    await expect(createEngine({ load: 'lazy', registry: createRegistry() })).rejects.toMatchObject(usage("made with load 'eager'"));
    await expect(createEngine({ cache: '/tmp/somewhere' as 'off' })).rejects.toMatchObject(usage(`option 'cache' must be 'off' or a cache`));
  });

  it('gives each engine its own caches: plans, validators and the registry are never shared', async () => {
    const options = { chainsDir: join(CLI, 'chains'), pluginsDir: join(CLI, 'plugins'), cache: 'off' as const };
    const [a, b] = [await createEngine(options), await createEngine({ ...options, load: 'lazy' })];
    try {
      expect(a.chain('sum')).toBeDefined();
      expect(a.chain('sum')).not.toBe(b.chain('sum'));
      expect(a.tools().get('add')).not.toBe(b.tools().get('add'));
      expect((await b.run('sum', { a: 1 })).outputs).toEqual((await a.run('sum', { a: 1 })).outputs);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('running a chain whose file is invalid', () => {
  it("fails with the file's first problem: its code, and its place said once", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolchain-invalid-'));
    await writeFile(join(dir, 'bad.yaml'), 'version: "1"\nname: bad\nsteps:\n  - name: s\n    tool: x\n    imput_map: { a: 1 }\n');
    const engine = await createEngine({ chainsDir: dir, cache: 'off' });
    try {
      const result = await engine.run('bad', {});
      expect(result.error?.code).toBe('UNKNOWN_KEY');
      expect(result.error?.message).toMatch(new RegExp(`^chain 'bad' is invalid: ${join(dir, 'bad.yaml')}:6:5 unknown key 'imput_map' in step 's' \\(did you mean 'input_map'\\?\\)`));
      expect(result.error?.message.match(/UNKNOWN_KEY|bad\.yaml/g)).toEqual(['bad.yaml']);
    } finally {
      await engine.close();
    }
  });
});

describe('a literal JSONPath read as a reference', () => {
  it('fails VALIDATION_FAILED with the $$ escape as the fix', async () => {
    const engine = await createEngine({ cache: 'off' });
    try {
      engine.registerTool({
        name: 'query',
        parameters: { type: 'object', properties: { value: {}, path: { type: 'string', pattern: '^\\$' } }, required: ['value', 'path'] },
        handler: (args) => args,
      });
      engine.addChain('version: "1"\nname: q\ninputs: { data: object }\nsteps:\n  - name: sizes\n    tool: query\n    input_map:\n      value: $.data\n      path: $.data.files[*].size\n');
      const result = await engine.run('q', { data: {} });
      expect(result.error?.code).toBe('VALIDATION_FAILED');
      expect(result.error?.message).toMatch(/key 'path': .*; \$\.data\.files\[\*\]\.size was read as a reference into the run: to pass the JSONPath itself, write '\$\$\.data\.files\[\*\]\.size'$/);
    } finally {
      await engine.close();
    }
  });
});
