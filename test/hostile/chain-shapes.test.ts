import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileChain, createEngine } from '../../src/index.js';
import { writeFiles } from '../fixtures/plugins/helpers.js';
import { runCli } from '../helpers/run-cli.js';

// The JSON Schema and the engine agree: wrongly typed values crashed the loader for the
// whole folder (`depends_on: a` → "(s.depends_on ?? []).forEach is not a function"), a bad input
// name was reported at the map's first key, and some schema keys had no description for the
// editor to show.

const REPO = join(import.meta.dirname, '..', '..');
const step = (extra: string): string => `name: c\nsteps:\n  - name: s\n    tool: t\n${extra}`;

describe('wrongly typed values are diagnostics of their file', () => {
  const cases: [string, string, string, number, number][] = [
    ['depends_on: a', '    depends_on: a\n', 'BAD_TYPE', 5, 17],
    ['depends_on: {a: 1}', '    depends_on: {a: 1}\n', 'BAD_TYPE', 5, 17],
    ['depends_on: [1]', '    depends_on: [1]\n', 'BAD_TYPE', 5, 18],
    ['retry: { fallback: x }', '    retry: { fallback: x }\n', 'BAD_TYPE', 5, 24],
    ['retry: { fallback: { output: 1, input_map: 5 } }', '    retry: { fallback: { output: 1, input_map: 5 } }\n', 'BAD_TYPE', 5, 48],
    ['when: [1]', '    when: [1]\n', 'BAD_TYPE', 5, 11],
  ];
  for (const [label, extra, code, line, col] of cases) {
    it(`${label} → ${code} at ${line}:${col}, no exception`, () => {
      const { plan, diagnostics } = compileChain(step(extra), { file: 'c.yaml' });
      expect(plan).toBeUndefined();
      expect(diagnostics[0]).toMatchObject({ code, line, col, file: 'c.yaml' });
    });
  }

  it("a bad input name ('hour-12') is reported at its own key, not the map's first", () => {
    const { diagnostics } = compileChain('name: c\ninputs:\n  ok: string\n  hour-12: boolean\nsteps:\n  - name: s\n    tool: t\n', { file: 'c.yaml' });
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'BAD_NAME', line: 4, col: 3, pointer: '/inputs/hour-12' })]);
  });

  describe('one such file in a folder', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'toolchain-shapes-'));
      await writeFiles(dir, {
        'chains/broken.yaml': step('    depends_on: a\n'),
        'chains/good.yaml': 'name: good\nsteps:\n  - name: s\n    tool: echo\n    input_map: { v: 1 }\n',
      });
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('validate reports it at FILE:LINE:COL and nothing else breaks', async () => {
      const out = await runCli(['validate', '--plugins', join(dir, 'none')], { cwd: dir });
      expect(out.stderr).not.toContain('is not a function');
      expect(out.stdout).toContain("chains/broken.yaml:5:17 BAD_TYPE depends_on of step 's' must be an array, not a string");
      // good.yaml is only short of its tool here (no plugins): checked, not broken by its neighbour.
      expect(out.stdout.split('\n').filter((l) => l.includes('good.yaml:'))).toEqual([expect.stringContaining('UNKNOWN_TOOL')]);
    });

    it('the other chains of the folder still run', async () => {
      const engine = await createEngine({ chainsDir: join(dir, 'chains'), pluginsDir: join(dir, 'none') });
      try {
        engine.registerTool({ name: 'echo', parameters: { type: 'object' }, handler: async (a) => a });
        expect((await engine.run('good', {})).status).toBe('succeeded');
      } finally {
        await engine.close();
      }
    });
  });
});

describe('YAML merge keys', () => {
  it("'<<' is an unknown key with a message that says merge keys are not supported", () => {
    const { diagnostics } = compileChain('name: c\nsteps:\n  - &base\n    name: a\n    tool: t\n  - <<: *base\n    name: b\n', { file: 'm.yaml' });
    expect(diagnostics[0]).toMatchObject({ code: 'UNKNOWN_KEY', line: 6, col: 5 });
    expect(diagnostics[0]!.message).toContain('merge keys are not supported');
  });
});

describe('the schemas explain every key', () => {
  for (const name of ['chain.schema.json', 'plugin.schema.json']) {
    it(`every property in ${name} has a description`, async () => {
      const schema = JSON.parse(await readFile(join(REPO, 'schemas', name), 'utf8')) as unknown;
      const missing: string[] = [];
      const walk = (node: unknown, path: string): void => {
        if (node === null || typeof node !== 'object') return;
        const properties = (node as { properties?: Record<string, { description?: string }> }).properties;
        for (const [key, value] of Object.entries(properties ?? {})) if (!value.description) missing.push(`${path}/properties/${key}`);
        for (const [key, value] of Object.entries(node)) walk(value, `${path}/${key}`);
      };
      walk(schema, '');
      expect(missing).toEqual([]);
    });
  }
});
