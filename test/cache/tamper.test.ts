import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { createEngine } from '../../src/index.js';
import { openDiskCache } from '../../src/cache/index.js';
import { REPO, runCli } from '../helpers/run-cli.js';
import { writeFiles } from '../fixtures/plugins/helpers.js';

// Nothing read back from a cache is trusted unless this user's engine wrote it.
// A project is run once to fill the per-user cache (validators, transformed modules, parsed YAML),
// then EVERY entry is replaced: code that would write a marker file if it were evaluated, and a
// changed chain. The same entries are also planted where the old engine looked, under the
// project's `.toolchain/cache`. The next run must give the same outputs and run nothing injected.

const KINDS = ['ajv', 'modules', 'yaml'] as const;

const PROJECT: Record<string, string> = {
  'chains/greet.yaml': [
    'name: greet',
    'inputs:',
    '  a: integer',
    '  b: { type: integer, default: 1 }',
    '  who: { type: string, default: world }',
    'steps:',
    '  - name: add',
    '    tool: add',
    '    input_map: { a: $.a, b: $.b }',
    '  - name: say',
    '    tool: say',
    '    input_map: { text: "Hello {{ $.who }}, the sum is {{ $.add.sum }}" }',
    'outputs:',
    '  sum: $.add.sum',
    '  text: $.say.text',
    '',
  ].join('\n'),
  'plugins/calc/plugin.yaml': [
    'name: calc',
    'version: 1.0.0',
    'tools:',
    '  - name: add',
    '    parameters:',
    '      type: object',
    '      properties: { a: { type: integer }, b: { type: integer } }',
    '      required: [a, b]',
    '    returns: { type: object, properties: { sum: { type: integer } }, required: [sum] }',
    '  - name: say',
    '    parameters: { type: object, properties: { text: { type: string } }, required: [text] }',
    '    returns: { type: object, properties: { text: { type: string } } }',
    '',
  ].join('\n'),
  'plugins/calc/tools/add.ts': "import { plus } from './arith.ts';\nexport default (args: { a: number; b: number }): { sum: number } => ({ sum: plus(args.a, args.b) });\n",
  'plugins/calc/tools/arith.ts': 'export const plus = (x: number, y: number): number => x + y;\n',
  'plugins/calc/tools/say.js': 'export default ({ text }) => ({ text });\n',
};

let root: string;
let project: string;
let cacheDir: string;
let markers: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'toolchain-tamper-'));
  project = join(root, 'project');
  cacheDir = join(root, 'user-cache');
  markers = join(root, 'markers');
  mkdirSync(markers);
  await writeFiles(project, PROJECT);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const entries = (dir: string, kind: string): string[] => (existsSync(join(dir, kind)) ? readdirSync(join(dir, kind)).filter((n) => !n.endsWith('.tmp')) : []);

/** What an attacker would write in place of an entry of each kind. */
function injected(kind: (typeof KINDS)[number], original: string, tag: string): string {
  const marker = JSON.stringify(join(markers, `${tag}-${kind}`));
  if (kind === 'ajv') {
    const code = `require('node:fs').writeFileSync(${marker}, 'ajv'); module.exports = function validate() { return true; };`;
    return JSON.stringify({ code, warnings: [] });
  }
  if (kind === 'modules') return `require('node:fs').writeFileSync(${marker}, 'module'); exports.default = () => ({ sum: 999, text: 'pwned' });`;
  // YAML entries are data: change what the chain says (a different template, a different sum).
  return original.replaceAll('Hello', 'Pwned').replaceAll('$.add.sum', '$.b');
}

/** Replaces every entry of the cache: half keep the old MAC, half get one made with a guessed key. */
function tamperAll(dir: string, tag: string): number {
  let count = 0;
  for (const kind of KINDS) {
    for (const name of entries(dir, kind)) {
      const file = join(dir, kind, name);
      const stored = readFileSync(file, 'utf8');
      const payload = injected(kind, stored.slice(65), tag);
      const mac = count % 2 === 0 ? stored.slice(0, 64) : createHmac('sha256', randomBytes(32)).update(`${kind}\0${name}\0${payload}`).digest('hex');
      writeFileSync(file, `${mac}\n${payload}`);
      count += 1;
    }
  }
  return count;
}

/** The old engine's layout: raw entries under the project's own `.toolchain/cache`. */
function plantInProject(dir: string, tag: string): void {
  for (const kind of KINDS) {
    mkdirSync(join(project, '.toolchain', 'cache', kind), { recursive: true });
    for (const name of entries(dir, kind)) writeFileSync(join(project, '.toolchain', 'cache', kind, name), injected(kind, readFileSync(join(dir, kind, name), 'utf8').slice(65), tag));
  }
}

describe('tampered caches run nothing injected', () => {
  it('toolchain run: every entry replaced, same outputs, no marker, nothing under the project', async () => {
    // The run store is not what this is about: runs are kept in memory, so the project stays empty.
    const env = { TOOLCHAIN_CACHE_DIR: cacheDir, TOOLCHAIN_STORE: 'memory:' };
    const args = ['run', 'greet', '--input', 'a=2', '--input', 'b=3', '--json'];
    const first = await runCli(args, { cwd: project, env });
    expect(first.stderr).toMatch(/^run [0-9a-f-]{36}\n$/);
    const outputs = JSON.parse(first.stdout).outputs;
    expect(outputs).toEqual({ sum: 5, text: 'Hello world, the sum is 5' });
    for (const kind of KINDS) expect(entries(cacheDir, kind).length, kind).toBeGreaterThan(0);
    expect(existsSync(join(project, '.toolchain'))).toBe(false);

    plantInProject(cacheDir, 'cli-project');
    expect(tamperAll(cacheDir, 'cli')).toBeGreaterThanOrEqual(6);

    const second = await runCli(args, { cwd: project, env });
    expect(second.stderr).toMatch(/^run [0-9a-f-]{36}\n$/);
    expect(JSON.parse(second.stdout).outputs).toEqual(outputs);
    expect(readdirSync(markers)).toEqual([]);

    // Each forged entry was ignored and computed again: what the cache holds now is genuine.
    const cache = openDiskCache(cacheDir)!;
    for (const kind of KINDS) {
      for (const name of entries(cacheDir, kind)) {
        const text = cache.read(kind, name);
        if (text === undefined) continue; // a tool this run did not need
        expect(text).not.toContain('writeFileSync');
        expect(text).not.toContain('Pwned');
      }
    }
    const recomputed = KINDS.flatMap((kind) => entries(cacheDir, kind).filter((name) => cache.read(kind, name) !== undefined));
    expect(recomputed.length).toBeGreaterThanOrEqual(5);
  });

  it('an eager engine in this process: every validator, module and parse read back is genuine', async () => {
    const dir = join(root, 'engine-cache');
    const make = () => createEngine({ chainsDir: join(project, 'chains'), pluginsDir: join(project, 'plugins'), cache: openDiskCache(dir)! });
    const first = await make();
    const outputs = (await first.run('greet', { a: 20, b: 22, who: 'you' })).outputs;
    await first.close();
    expect(outputs).toEqual({ sum: 42, text: 'Hello you, the sum is 42' });
    // Eager: both tools' parameters and returns, and the chain's inputs.
    expect(entries(dir, 'ajv').length).toBeGreaterThanOrEqual(5);

    tamperAll(dir, 'engine');
    const second = await make();
    try {
      expect(second.plugins().map((p) => p.status)).toEqual(['active']);
      const result = await second.run('greet', { a: 20, b: 22, who: 'you' });
      expect(result.outputs).toEqual(outputs);
      // Validators are the real ones: a bad argument is still refused.
      expect((await second.run('greet', { a: 'x' })).error?.code).toBe('INPUT_INVALID');
      expect(readdirSync(markers)).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it('parseYaml and a default engine write nothing into the working directory', () => {
    const cwd = join(root, 'empty-cwd');
    const home = join(root, 'home');
    mkdirSync(cwd);
    const script = `
      const lib = await import(${JSON.stringify(join(REPO, 'dist', 'index.js'))});
      const loader = await import(${JSON.stringify(join(REPO, 'dist', 'loader', 'index.js'))});
      loader.parseYaml('a: 1\\n', 'x.yaml');
      const engine = await lib.createEngine({ chainsDir: ${JSON.stringify(join(project, 'chains'))}, pluginsDir: ${JSON.stringify(join(project, 'plugins'))} });
      const result = await engine.run('greet', { a: 1 });
      await engine.close();
      console.log(JSON.stringify(result.outputs));`;
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home };
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd, env, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ sum: 2, text: 'Hello world, the sum is 2' });
    expect(readdirSync(cwd)).toEqual([]);
    // The default place: ~/.cache/toolchain, the user's alone.
    const userCache = join(home, '.cache', 'toolchain');
    expect(readdirSync(userCache).sort()).toEqual(['ajv', 'key', 'modules', 'yaml']);
  });
});

describe('an unsafe cache directory', () => {
  it('toolchain run warns once, caches nothing, and runs as usual', async () => {
    const dir = join(root, 'shared-cache');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    let stdout = '';
    let stderr = '';
    const out = new PassThrough().on('data', (d: Buffer) => (stdout += d.toString()));
    const err = new PassThrough().on('data', (d: Buffer) => (stderr += d.toString()));
    const stdin = new PassThrough();
    stdin.end();
    const io = { stdout: out, stderr: err, stdin, cwd: project, env: { TOOLCHAIN_CACHE_DIR: dir, TOOLCHAIN_STORE: 'memory:' } };
    expect(await main(['run', 'greet', '--input', 'a=4'], io)).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ sum: 5, text: 'Hello world, the sum is 5' });
    expect(stderr.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^warning: not using the cache directory .*shared-cache: it has mode 0777 .*caching is off$/), expect.stringMatching(/^run [0-9a-f-]{36}$/)]);
    expect(readdirSync(dir)).toEqual([]);
  });
});
