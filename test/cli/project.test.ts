import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, runCli, STACK_LINE } from '../helpers/run-cli.js';

// The newcomer's path through the CLI, as real child processes: init → validate → run → list,
// and `watch` reporting reloads and errors while files change under it.

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tc-project-'));
  const init = await runCli(['init'], { cwd: dir });
  expect(init.code).toBe(0);
  return dir;
}

describe('toolchain init', () => {
  it('creates a starter plugin and chain that validate and run', async () => {
    const dir = await project();
    expect(await readFile(join(dir, 'chains', 'hello.yaml'), 'utf8')).toMatch(/^# yaml-language-server: \$schema=.*chain\.schema\.json/);
    const validate = await runCli(['validate'], { cwd: dir });
    expect(validate.stderr).toMatch(/^ok: 1 chain and 1 plugin valid/);
    expect(validate.code).toBe(0);
    const run = await runCli(['run', 'hello', '--input', 'name=Ada'], { cwd: dir });
    expect(run.stderr).not.toMatch(STACK_LINE);
    expect(JSON.parse(run.stdout)).toEqual({ text: 'Hello, Ada! / Bonjour, Ada!' });
    expect(run.code).toBe(0);
  });

  it('refuses to overwrite, and writes nothing', async () => {
    const dir = await project();
    await writeFile(join(dir, 'chains', 'hello.yaml'), '# mine\n');
    const again = await runCli(['init'], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/would overwrite .*hello\.yaml/);
    expect(await readFile(join(dir, 'chains', 'hello.yaml'), 'utf8')).toBe('# mine\n');
  });
});

describe('toolchain list', () => {
  it('lists tools and plugins with status', async () => {
    const tools = await runCli(['list', 'tools', '--json']);
    expect(tools.code).toBe(0);
    const rows = JSON.parse(tools.stdout) as { name: string; plugin: string; status: string; dangerous: boolean }[];
    expect(rows).toContainEqual(expect.objectContaining({ name: 'find_city', plugin: 'geo', status: 'ok', dangerous: false }));
    expect(rows).toContainEqual(expect.objectContaining({ name: 'write_file', plugin: 'files', dangerous: true }));
    const plugins = await runCli(['list', 'plugins', '--json']);
    const prow = JSON.parse(plugins.stdout) as { name: string; version: string; status: string; errors: string[] }[];
    expect(prow.map((p) => [p.name, p.status])).toEqual([['files', 'ok'], ['geo', 'ok'], ['http', 'ok'], ['shell', 'ok'], ['text', 'ok']]);
  });

  it('cuts a description at the end of its first sentence, not at the first dot', async () => {
    const tools = await runCli(['list', 'tools']);
    expect(tools.stdout).toContain(
      'text/json_query              Evaluate a JSONPath (RFC 9535, e.g. $.items[*].name or $[?@.size > 100]) over a JSON value and return every match, optionally reduced by an aggregate (sum, min, max, avg, count, first, last).\n',
    );
    const dir = await project();
    await writeFile(
      join(dir, 'plugins', 'hello', 'plugin.yaml'),
      'name: hello\nversion: 0.1.0\ntools:\n  - name: greet\n    description: |\n      Greets in v1.2 style, i.e. politely\n      (see "Mr. Smith."). Then waves.\n    parameters: { type: object }\n',
    );
    const mine = await runCli(['list', 'tools'], { cwd: dir });
    expect(mine.stdout).toBe('hello/greet                  Greets in v1.2 style, i.e. politely (see "Mr. Smith.").\n');
  });

  it('shows a plugin whose tools have no handler as partial or error, naming the tools that do not load', async () => {
    const dir = await project();
    const manifest = (extra: string): string => `name: hello\nversion: 0.1.0\ntools:\n  - name: greet\n    description: Greets.\n    parameters: { type: object }\n${extra}`;
    await writeFile(join(dir, 'plugins', 'hello', 'plugin.yaml'), manifest('  - name: wave\n    description: Waves.\n    parameters: { type: object }\n'));
    const partial = await runCli(['list', 'plugins'], { cwd: dir });
    expect(partial.stdout.split('\n')[0]).toBe('hello            0.1.0     partial   greet, wave (does not load)');
    const tools = await runCli(['list', 'tools', '--json'], { cwd: dir });
    expect((JSON.parse(tools.stdout) as { name: string; status: string }[]).map((t) => [t.name, t.status])).toEqual([['greet', 'ok'], ['wave', 'error']]);
    await rename(join(dir, 'plugins', 'hello', 'tools', 'greet.ts'), join(dir, 'plugins', 'hello', 'tools', 'greet.txt'));
    const none = await runCli(['list', 'plugins', '--json'], { cwd: dir });
    expect(JSON.parse(none.stdout)).toEqual([expect.objectContaining({ name: 'hello', status: 'error', tools: [], failed_tools: ['greet', 'wave'] })]);
  });

  it('shows a broken plugin with its error', async () => {
    const dir = await project();
    await writeFile(join(dir, 'plugins', 'hello', 'plugin.yaml'), 'name: hello\nversion: not-semver\ntools: []\n');
    const { stdout, code } = await runCli(['list', 'plugins', '--json'], { cwd: dir });
    expect(code).toBe(0);
    const [row] = JSON.parse(stdout) as { status: string; errors: string[] }[];
    expect(row!.status).toBe('error');
    expect(row!.errors[0]).toMatch(/^plugins\/hello\/plugin\.yaml:2:\d+ /);
  });
});

describe('toolchain watch', () => {
  const children: ReturnType<typeof spawn>[] = [];
  afterEach(() => {
    for (const c of children) c.kill('SIGKILL');
  });

  it('prints each reload and each error, keeps the last good version, and stops on SIGINT', async () => {
    const dir = await project();
    const child = spawn(process.execPath, [join(REPO, 'bin', 'toolchain.js'), 'watch'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const waitFor = async (re: RegExp, after = 0): Promise<void> => {
      const deadline = Date.now() + 15_000;
      while (!re.test(out.slice(after))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${re}; output so far:\n${out}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    await waitFor(/watching plugins \(1 plugin\) and chains \(1 chain\)/);

    const manifest = join(dir, 'plugins', 'hello', 'plugin.yaml');
    const good = await readFile(manifest, 'utf8');
    let mark = out.length;
    await writeFile(manifest, good.replace('version: 0.1.0', 'version: 0.2.0'));
    await waitFor(/plugin hello 0\.2\.0 \(plugins\/hello\) loaded/, mark);

    mark = out.length;
    await writeFile(manifest, good.replace('tools:', 'tools: [oops'));
    await waitFor(/plugin hello \(plugins\/hello\) failed to load; version 0\.2\.0 keeps serving\n.*plugins\/hello\/plugin\.yaml:\d+:\d+ YAML_SYNTAX /, mark);

    mark = out.length;
    // An editor's atomic save: write a temporary file, then rename it over the chain.
    const chain = join(dir, 'chains', 'hello.yaml');
    await writeFile(`${chain}.tmp`, (await readFile(chain, 'utf8')).replace('name: hello', 'name: hello_again'));
    await rename(`${chain}.tmp`, chain);
    await waitFor(/chains reloaded: hello_again/, mark);

    // Two folders that declare one plugin name: each line says which folder it is about.
    mark = out.length;
    await mkdir(join(dir, 'plugins', 'copy', 'tools'), { recursive: true });
    await writeFile(join(dir, 'plugins', 'copy', 'tools', 'greet.ts'), await readFile(join(dir, 'plugins', 'hello', 'tools', 'greet.ts'), 'utf8'));
    await writeFile(join(dir, 'plugins', 'copy', 'plugin.yaml'), good);
    await waitFor(/plugin hello 0\.1\.0 \(plugins\/copy\) inactive\n/, mark);
    mark = out.length;
    await rm(join(dir, 'plugins', 'copy'), { recursive: true });
    await waitFor(/plugin hello 0\.1\.0 \(plugins\/copy\) removed\n/, mark);
    expect(out.slice(mark)).not.toMatch(/\(plugins\/hello\) removed/);

    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(out).toMatch(/stopped\n$/);
    expect(code).toBe(0);
    expect(out).not.toMatch(STACK_LINE);
  });
});
