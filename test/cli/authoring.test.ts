import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { runCli } from '../helpers/run-cli.js';

// Init's hint and .gitignore, missing folders named, and one broken tool that no
// longer takes its plugin's healthy tools down with it.

describe('init', () => {
  it('prints a next command that works as printed, with the folders given, and ignores .toolchain/', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-init-'));
    const init = await runCli(['--chains', 'flows', '--plugins', 'tools', 'init'], { cwd: dir });
    expect(init.code).toBe(0);
    const next = /^next: (.+)$/m.exec(init.stdout)![1]!;
    expect(next).toMatch(/ --chains flows --plugins tools run hello --input name=Ada$/);
    expect(await readFile(join(dir, '.gitignore'), 'utf8')).toBe('.toolchain/\n');
    const args = next.replace(/^node \S+ /, '').split(' ');
    const run = await runCli(args, { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ text: 'Hello, Ada! / Bonjour, Ada!' });
    const validate = await runCli(['--chains', 'flows', '--plugins', 'tools', 'validate'], { cwd: dir });
    expect(validate.stdout).toBe('');
    expect(validate.code).toBe(0);
  });

  it('adds to an existing .gitignore once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-init-'));
    await writeFile(join(dir, '.gitignore'), 'node_modules/');
    await runCli(['init'], { cwd: dir });
    expect(await readFile(join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\n.toolchain/\n');
  });
});

describe('missing folders', () => {
  it('are named by list and validate instead of finding nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-empty-'));
    const list = await runCli(['list', 'chains'], { cwd: dir });
    expect(list.stderr).toMatch(/no chains folder: chains does not exist/);
    const validate = await runCli(['validate'], { cwd: dir });
    expect(validate.stderr).toMatch(/warning: chains does not exist/);
    expect(validate.stderr).toMatch(/warning: plugins does not exist/);
  });
});

describe('a plugin with one broken tool', () => {
  async function plugin(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'tc-broken-'));
    await mkdir(join(dir, 'plugins', 'mixed', 'tools'), { recursive: true });
    await mkdir(join(dir, 'chains'));
    await writeFile(
      join(dir, 'plugins', 'mixed', 'plugin.yaml'),
      'name: mixed\nversion: 1.0.0\ntools:\n  - name: good\n    handler: tools/good.js\n  - name: bad\n    handler: tools/bad.js\n',
    );
    await writeFile(join(dir, 'plugins', 'mixed', 'tools', 'good.js'), 'export default async () => ({ ok: true });\n');
    await writeFile(join(dir, 'plugins', 'mixed', 'tools', 'bad.js'), "throw new Error('no database');\n");
    await writeFile(join(dir, 'chains', 'uses.yaml'), 'name: uses\nsteps:\n  - name: a\n    tool: good\n  - name: b\n    tool: bad\n');
    await writeFile(join(dir, 'chains', 'good.yaml'), 'name: good_only\nsteps:\n  - name: a\n    tool: good\n');
    return dir;
  }

  it('keeps the healthy tools serving and names the broken one with its reason', async () => {
    const dir = await plugin();
    const engine = await createEngine({ chainsDir: join(dir, 'chains'), pluginsDir: join(dir, 'plugins'), cache: 'off' });
    try {
      expect(engine.plugins().map((p) => [p.name, p.status, p.tools])).toEqual([['mixed', 'active', ['mixed/good']]]);
      expect((await engine.run('good_only')).outputs).toEqual({ ok: true });
      const result = await engine.run('uses');
      expect(result.error?.code).toBe('TOOL_NOT_FOUND');
      expect(result.error?.message).toMatch(/unknown tool 'bad'; declared by plugin 'mixed', failed to load: tools\/bad\.js failed to load: no database/);
    } finally {
      await engine.close();
    }
    const run = await runCli(['run', 'uses'], { cwd: dir });
    expect(run.stderr).toMatch(/HANDLER_LOAD .*bad\.js failed to load: no database/);
  });

  it('is reported by validate where the manifest declares it, and where a chain uses it', async () => {
    const dir = await plugin();
    await writeFile(join(dir, 'plugins', 'mixed', 'plugin.yaml'), 'name: mixed\nversion: 1.0.0\ntools:\n  - name: good\n    handler: tools/good.js\n  - name: bad\n    handler: tools/missing.js\n');
    const { stdout, code } = await runCli(['validate'], { cwd: dir });
    expect(code).toBe(2);
    expect(stdout).toMatch(/^chains\/uses\.yaml:6:11 UNKNOWN_TOOL step 'b' uses tool 'bad', declared by plugin 'mixed', failed to load: /m);
    expect(stdout).toMatch(/^plugins\/mixed\/plugin\.yaml:7:14 HANDLER_LOAD /m);
  });
});
