import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { MAX_SUBCHAIN_DEPTH } from '../../src/compiler/index.js';
import { removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';
import { runCli } from '../helpers/run-cli.js';

// A valid, acyclic 1,000-deep nesting of sub-chains passed `validate`, then
// overflowed the stack at `run` (exit 13, no JSON) and crashed the MCP server; `addChain` accepted
// a chain that runs itself, whose run never settled. Sub-chains now start as tasks of their own,
// nesting is limited to 64 levels (at compile time and at run time), and `addChain` checks cycles.

/** `c0` runs `c1` … runs `c{depth}`, which calls the tool `leaf`. */
function nesting(depth: number, prefix = 'c'): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < depth; i++) files[`chains/${prefix}${i}.yaml`] = `name: ${prefix}${i}\nsteps:\n  - name: down\n    chain: ${prefix}${i + 1}\n`;
  files[`chains/${prefix}${depth}.yaml`] = `name: ${prefix}${depth}\nsteps:\n  - name: bottom\n    tool: leaf\n`;
  return files;
}

let dir: string;
beforeAll(async () => {
  dir = await tempDir('toolchain-deep-');
  await writeFiles(dir, {
    ...nesting(1000),
    'plugins/deep/plugin.yaml': 'name: deep\nversion: 1.0.0\ntools:\n  - name: leaf\n',
    // How many stack frames lie below the leaf's call (all of them, not the default ten).
    'plugins/deep/tools/leaf.js':
      'export default () => {\n  const limit = Error.stackTraceLimit;\n  Error.stackTraceLimit = Infinity;\n  const frames = new Error().stack.split("\\n").length;\n  Error.stackTraceLimit = limit;\n  return { frames };\n};\n',
  });
});
afterAll(() => removeDir(dir));

describe('deep sub-chains', () => {
  it('validate reports SUBCHAIN_TOO_DEEP at the step that leads too deep, for each chain past the limit', async () => {
    const out = await runCli(['validate'], { cwd: dir });
    expect(out.code).toBe(2);
    const lines = out.stdout.trim().split('\n');
    expect(lines).toContain("chains/c0.yaml:4:12 SUBCHAIN_TOO_DEEP step 'down' runs chain 'c1', which nests sub-chains 1000 levels deep below 'c0'; at most 64 are allowed");
    // c936 runs 64 levels below it: allowed. c935 runs 65.
    expect(lines.filter((l) => l.includes('SUBCHAIN_TOO_DEEP'))).toHaveLength(1000 - MAX_SUBCHAIN_DEPTH);
    expect(lines.some((l) => l.startsWith('chains/c936.yaml'))).toBe(false);
  });

  it('run refuses the too-deep chain with one line and exit 2, and runs a chain 64 levels deep', async () => {
    const deep = await runCli(['run', 'c0'], { cwd: dir });
    expect(deep.code).toBe(2);
    expect(deep.stderr).toContain('SUBCHAIN_TOO_DEEP');
    const ok = await runCli(['run', `c${1000 - MAX_SUBCHAIN_DEPTH}`], { cwd: dir });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ frames: expect.any(Number) });
  });

  it('nesting does not grow the stack: the leaf sees as many frames 64 levels down as 1 level down', async () => {
    const engine = await createEngine({ pluginsDir: join(dir, 'plugins'), cache: 'off' });
    try {
      engine.addChain('name: c1000\nsteps:\n  - name: bottom\n    tool: leaf\n');
      for (let i = 999; i >= 1000 - MAX_SUBCHAIN_DEPTH; i--) engine.addChain(chainText(`c${i}`, `c${i + 1}`));
      const shallow = await engine.run('c999');
      const deep = await engine.run(`c${1000 - MAX_SUBCHAIN_DEPTH}`);
      expect(shallow.status).toBe('succeeded');
      expect(deep.status).toBe('succeeded');
      const frames = (r: typeof deep): number => (r.outputs as { frames: number }).frames;
      expect(frames(deep)).toBeLessThanOrEqual(frames(shallow) + 2);
    } finally {
      await engine.close();
    }
  });
});

function chainText(name: string, next: string): string {
  return `name: ${name}\nsteps:\n  - name: down\n    chain: ${next}\n`;
}

describe('sub-chain cycles in a folder', () => {
  it('a cycle through 4,000 chains is reported in each file with a short path, without overflowing', async () => {
    const { compileChainSet } = await import('../../src/index.js');
    const n = 4000;
    const sources = Array.from({ length: n }, (_, i) => ({ file: `c${i}.yaml`, text: chainText(`c${i}`, `c${(i + 1) % n}`) }));
    const set = compileChainSet(sources);
    expect(set.plans.size).toBe(0);
    const cycles = set.diagnostics.filter((d) => d.code === 'SUBCHAIN_CYCLE');
    expect(cycles).toHaveLength(n);
    expect(set.diagnostics).toHaveLength(n);
    const c0 = cycles.find((d) => d.file === 'c0.yaml')!;
    expect(c0).toMatchObject({ line: 4, col: 12 });
    expect(c0.message).toBe("step 'down' runs chain 'c1', which leads back to 'c0': c0 → c1 → c2 → c3 → c4 → c5 → c6 → c7 → c8 → c9 → … 3981 more … → c3991 → c3992 → c3993 → c3994 → c3995 → c3996 → c3997 → c3998 → c3999 → c0; a chain may not run itself");
  }, 60_000);
});

describe('the limit at run time and cycles from code', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ cache: 'off' });
    engine.registerTool({ name: 'leaf', handler: () => ({ ok: true }) });
  });
  afterAll(() => engine.close());

  it('addChain refuses a chain that runs itself, directly or through others (SUBCHAIN_CYCLE)', () => {
    engine.addChain('name: selfish\nsteps:\n  - name: s\n    tool: leaf\n');
    expect(() => engine.addChain('name: selfish\nsteps:\n  - name: again\n    chain: selfish\n')).toThrow(
      expect.objectContaining({ code: 'SUBCHAIN_CYCLE', message: expect.stringContaining("<memory>:4:12 SUBCHAIN_CYCLE step 'again' runs chain 'selfish', which leads back to 'selfish'") }),
    );
    engine.addChain('name: ping\nsteps:\n  - name: s\n    tool: leaf\n');
    engine.addChain('name: pong\nsteps:\n  - name: s\n    chain: ping\n');
    expect(() => engine.addChain('name: ping\nsteps:\n  - name: s\n    chain: pong\n')).toThrow(expect.objectContaining({ code: 'SUBCHAIN_CYCLE' }));
    // The refused versions changed nothing: both still run.
    return Promise.all([engine.run('selfish'), engine.run('pong')]).then((results) => expect(results.map((r) => r.status)).toEqual(['succeeded', 'succeeded']));
  });

  it('addChain names the way back in a SUBCHAIN_CYCLE, as a folder does', () => {
    engine.addChain('name: tick\nsteps:\n  - name: s\n    tool: leaf\n');
    engine.addChain('name: tock\nsteps:\n  - name: s\n    chain: tick\n');
    expect(() => engine.addChain('name: tick\nsteps:\n  - name: s\n    chain: tock\n')).toThrow(
      expect.objectContaining({ message: expect.stringContaining("SUBCHAIN_CYCLE step 's' runs chain 'tock', which leads back to 'tick': tick → tock → tick; a chain may not run itself") }),
    );
  });

  it('addChain refuses a chain that would nest too deep (SUBCHAIN_TOO_DEEP)', () => {
    engine.addChain('name: d70\nsteps:\n  - name: s\n    tool: leaf\n');
    for (let i = 69; i >= 6; i--) engine.addChain(chainText(`d${i}`, `d${i + 1}`));
    expect(() => engine.addChain(chainText('d5', 'd6'))).toThrow(expect.objectContaining({ code: 'SUBCHAIN_TOO_DEEP' }));
  });

  it('a run that reaches the limit through chains changed since they were checked fails with SUBCHAIN_TOO_DEEP', async () => {
    // e0 … e64: 64 levels below e0, allowed. Then the bottom gains one more level.
    engine.addChain('name: e64\nsteps:\n  - name: s\n    tool: leaf\n');
    for (let i = 63; i >= 0; i--) engine.addChain(chainText(`e${i}`, `e${i + 1}`));
    expect((await engine.run('e0')).status).toBe('succeeded');
    engine.addChain('name: extra\nsteps:\n  - name: s\n    tool: leaf\n');
    engine.addChain(chainText('e64', 'extra'));
    const result = await engine.run('e0');
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('SUBCHAIN_TOO_DEEP');
    // Said once, not wrapped by each of the 64 levels above.
    expect(result.error?.message).toBe("chain 'extra' would run 65 levels of sub-chains deep; at most 64 are allowed");
  });
});
