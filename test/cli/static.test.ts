import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { badFixtures, BAD_DIR } from '../helpers/bad-fixtures.js';
import { REPO, runCli, STACK_LINE } from '../helpers/run-cli.js';

const FIXTURES = join(REPO, 'test', 'fixtures');
const PLUGINS = join(FIXTURES, 'cli-plugins');

describe('toolchain validate (child process)', () => {
  for (const fx of badFixtures()) {
    it(`${fx.name}: exits 2 with ${fx.code}`, async () => {
      // The data-flow fixtures need the shipped tools' schemas.
      const plugins = fx.name.startsWith('flow-') ? join(REPO, 'plugins') : PLUGINS;
      const { code, stdout, stderr } = await runCli(['validate', '--chains', BAD_DIR, '--plugins', plugins, fx.name], { cwd: BAD_DIR });
      expect(code).toBe(2);
      const lines = stdout.trim().split('\n');
      const line = lines.find((l) => l.includes(` ${fx.code} `));
      expect(line, stdout).toBeDefined();
      expect(line).toMatch(new RegExp(`^${fx.name.replace('.', '\\.')}:${fx.line ?? '\\d+'}:${fx.col ?? '\\d+'} ${fx.code} \\S`));
      expect(stderr + stdout).not.toMatch(STACK_LINE);
    });
  }

  it('survives 5,000-deep nesting and answers with YAML_LIMIT', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-deep-'));
    const file = join(dir, 'deep.yaml');
    await writeFile(file, `name: deep\nsteps:\n  - name: a\n    tool: echo\n    input_map: { x: ${'['.repeat(5000)}${']'.repeat(5000)} }\n`);
    const { code, stdout, stderr } = await runCli(['validate', '--chains', dir, '--plugins', PLUGINS, file]);
    expect(code).toBe(2);
    expect(stdout).toMatch(/deep\.yaml:5:\d+ YAML_LIMIT /);
    expect(stderr).not.toMatch(STACK_LINE);
  });

  it('rejects a 20 MB file by its size', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-big-'));
    const file = join(dir, 'big.yaml');
    await writeFile(file, `name: big\nsteps:\n  - name: a\n    tool: echo\n    description: "${'x'.repeat(20 * 1024 * 1024)}"\n`);
    const { code, stdout } = await runCli(['validate', '--chains', dir, '--plugins', PLUGINS]);
    expect(code).toBe(2);
    expect(stdout).toMatch(/big\.yaml:1:1 FILE_TOO_LARGE /);
  });

  it('reports a sub-chain cycle across files', async () => {
    const dir = join(FIXTURES, 'subchains', 'cycle');
    const { code, stdout } = await runCli(['validate', '--chains', dir, '--plugins', PLUGINS]);
    expect(code).toBe(2);
    const rel = relative(REPO, dir);
    expect(stdout.trim().split('\n').sort()).toEqual([
      expect.stringMatching(new RegExp(`^${rel}/inner\\.yaml:4:12 SUBCHAIN_CYCLE `)),
      expect.stringMatching(new RegExp(`^${rel}/outer\\.yaml:4:12 SUBCHAIN_CYCLE `)),
    ]);
  });

  it('warns UNDECLARED_PARAMETER at an input_map key a tool with open parameters does not declare (closest name given); an error only where the schema forbids it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-undeclared-'));
    await mkdir(join(dir, 'chains'));
    await mkdir(join(dir, 'plugins', 'hc_math', 'tools'), { recursive: true });
    const params = (closed: boolean): string => `    parameters: { type: object, properties: { a: { type: number }, b: { type: number } }, required: [a, b]${closed ? ', additionalProperties: false' : ''} }\n`;
    await writeFile(join(dir, 'plugins', 'hc_math', 'plugin.yaml'), `name: hc_math\nversion: 1.0.0\ntools:\n  - name: add\n    description: Adds.\n${params(false)}  - name: add_strict\n    description: Adds.\n${params(true)}`);
    for (const tool of ['add', 'add_strict']) await writeFile(join(dir, 'plugins', 'hc_math', 'tools', `${tool}.js`), 'export default ({ a, b }) => ({ sum: a + b });\n');
    await writeFile(join(dir, 'chains', 'sum.yaml'), 'name: sum\nsteps:\n  - name: s1\n    tool: add\n    input_map:\n      a: 1\n      c: 2\n      bb: 3\n');
    const open = await runCli(['validate'], { cwd: dir });
    expect(open.stdout.trim().split('\n')).toEqual([
      "chains/sum.yaml:5:5 MISSING_PARAMETER step 's1' calls tool 'add' without 'b', which it requires",
      "chains/sum.yaml:7:7 UNDECLARED_PARAMETER tool 'add' declares no parameter 'c'; its parameters are a, b; its schema lets other keys through, so the value is passed on unchecked",
      "chains/sum.yaml:8:7 UNDECLARED_PARAMETER tool 'add' declares no parameter 'bb' (did you mean 'b'?); its parameters are a, b; its schema lets other keys through, so the value is passed on unchecked",
    ]);
    expect(open.code).toBe(2);
    // Given every parameter, the undeclared keys alone are warnings: the chain is valid.
    await writeFile(join(dir, 'chains', 'sum.yaml'), 'name: sum\nsteps:\n  - name: s1\n    tool: add\n    input_map: { a: 1, b: 2, c: 3 }\n');
    const warned = await runCli(['validate'], { cwd: dir });
    expect([warned.code, warned.stdout]).toEqual([0, expect.stringMatching(/^chains\/sum\.yaml:5:30 UNDECLARED_PARAMETER tool 'add' declares no parameter 'c'/)]);
    await writeFile(join(dir, 'chains', 'sum.yaml'), 'name: sum\nsteps:\n  - name: s1\n    tool: add_strict\n    input_map: { a: 1, b: 2, c: 3 }\n');
    const closed = await runCli(['validate'], { cwd: dir });
    expect([closed.code, closed.stdout]).toEqual([2, "chains/sum.yaml:5:30 UNKNOWN_PARAMETER tool 'add_strict' has no parameter 'c'; its parameters are a, b\n"]);
  });

  it('passes the golden valid chains', async () => {
    const { code, stdout, stderr } = await runCli(['validate', '--chains', join(FIXTURES, 'valid'), '--plugins', PLUGINS]);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^ok: 4 chains and 1 plugin valid/);
    expect(code).toBe(0);
  });

  it('prints a stack trace only with --debug', async () => {
    const plain = await runCli(['graph', 'nope', '--chains', join(FIXTURES, 'valid'), '--plugins', PLUGINS]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/CHAIN_NOT_FOUND no chain named 'nope'/);
    expect(plain.stderr).not.toMatch(STACK_LINE);
    const debug = await runCli(['graph', 'nope', '--debug', '--chains', join(FIXTURES, 'valid'), '--plugins', PLUGINS]);
    expect(debug.stderr).toMatch(STACK_LINE);
  });
});

describe('toolchain graph and list (child process)', () => {
  const chains = join(FIXTURES, 'valid');

  it('draws a diamond in Mermaid, order-only edges dashed', async () => {
    const { code, stdout } = await runCli(['graph', 'city_brief', '--format', 'mermaid', '--chains', chains, '--plugins', PLUGINS]);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('flowchart TD');
    expect(lines).toContain('  locate --> clock');
    expect(lines).toContain('  locate --> facts');
    expect(lines).toContain('  facts --> brief');
    expect(lines).not.toContain('  clock --> facts');
    expect(lines.filter((l) => l.includes('-->') || l.includes('-.->'))).toHaveLength(5);
  });

  it('draws Graphviz dot', async () => {
    const { code, stdout } = await runCli(['graph', 'diamond', '--format', 'dot', '--chains', chains, '--plugins', PLUGINS]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^digraph "diamond" \{/);
    for (const e of ['"a" -> "b"', '"a" -> "c"', '"a" -> "d"', '"b" -> "e"', '"c" -> "e"', '"d" -> "e"']) expect(stdout).toContain(e);
    expect(stdout).not.toContain('"a" -> "e"');
  });

  it('rejects an unknown format as bad usage', async () => {
    const { code, stderr } = await runCli(['graph', 'diamond', '--format', 'gif', '--chains', chains]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/gif/);
  });

  it('lists chains as JSON', async () => {
    const { code, stdout } = await runCli(['list', 'chains', '--json', '--chains', chains, '--plugins', PLUGINS]);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as { name: string; status: string; steps: number }[];
    expect(rows.map((r) => [r.name, r.status, r.steps])).toEqual([
      ['city_brief', 'ok', 4],
      ['diamond', 'ok', 5],
      ['for_each_words', 'ok', 2],
      ['forward_parallel', 'ok', 2],
    ]);
  });
});
