import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIO } from '../../src/cli/io.js';
import { runCli } from '../helpers/run-cli.js';

const REPO = join(import.meta.dirname, '..', '..');
const CLI = join(import.meta.dirname, '..', 'fixtures', 'executor', 'cli');
const DIRS = ['--chains', join(CLI, 'chains'), '--plugins', join(CLI, 'plugins')];
const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m;

function fakeIO(options: { stdin?: string; tty?: boolean } = {}) {
  const out = { stdout: '', stderr: '' };
  const stdout = new PassThrough();
  const stderr = Object.assign(new PassThrough(), { isTTY: options.tty === true });
  stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const stdin = new PassThrough();
  stdin.end(options.stdin ?? '');
  const io: CliIO = { stdout, stderr, stdin, cwd: REPO, env: {} };
  return { io, out };
}

async function run(args: string[], options: { stdin?: string; tty?: boolean } = {}) {
  const { io, out } = fakeIO(options);
  const code = await main([...DIRS, 'run', ...args], io);
  return { code, ...out };
}

describe('toolchain run (in process)', () => {
  it('prints the outputs as JSON and exits 0; --input strings are coerced', async () => {
    const r = await run(['sum', '--input', 'a=5']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ total: 16 });
    expect(r.stderr).toMatch(/^run [0-9a-f-]{36}\n$/);
  });

  it('--input-json, --input-file - and --input merge, later ones winning', async () => {
    const r = await run(['sum', '--input-file', '-', '--input-json', '{"b": 2}', '--input', 'a=7'], { stdin: '{"a": 1, "b": 100}' });
    expect(JSON.parse(r.stdout)).toEqual({ total: 19 });
  });

  it('--json prints the whole result in the documented shape', async () => {
    const r = await run(['sum', '--input', 'a=1', '--json']);
    const result = JSON.parse(r.stdout);
    expect(Object.keys(result).sort()).toEqual(['chain', 'duration_ms', 'outputs', 'run_id', 'status', 'steps']);
    expect(result).toMatchObject({ chain: 'sum', status: 'succeeded', outputs: { total: 12 }, steps: { first: { status: 'succeeded', attempts: 1 } } });
    expect(typeof result.steps.first.duration_ms).toBe('number');
  });

  it('a failed run exits 1 with one error line and no stack', async () => {
    const r = await run(['broken']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^run [0-9a-f-]{36}\nerror: ALWAYS this tool always fails \(step 'bad'\)\n$/);
    const json = await run(['broken', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'failed', error: { code: 'ALWAYS', step: 'bad' }, steps: { ok: { status: 'succeeded' }, bad: { status: 'failed' } } });
  });

  it("VALIDATION_FAILED names its step in the message itself, for whoever reads it without the step beside it (a log, --json)", async () => {
    const r = await run(['gap', '--input', 'a=1', '--json']);
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as { error: { code: string; message: string; step: string } };
    expect(result.error).toEqual({
      code: 'VALIDATION_FAILED',
      step: 's2',
      message: "step 's2': invalid arguments for tool 'demo/add': missing required property 'a' (integer) (key 'a' from $.s1.summ matched nothing)",
    });
    const text = await run(['gap', '--input', 'a=1']);
    expect(text.stderr.split('\n')[1]).toBe("error: VALIDATION_FAILED step 's2': invalid arguments for tool 'demo/add': missing required property 'a' (integer) (key 'a' from $.s1.summ matched nothing)");
  });

  it('bad input, an unknown chain, a missing tool and bad usage exit 2', async () => {
    const bad = await run(['sum', '--input', 'a=x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/INPUT_INVALID .*'a'/);
    expect((await run(['sum'])).code).toBe(2);
    const unknown = await run(['summ']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("did you mean 'sum'");
    expect((await run(['ghost'])).code).toBe(2);
    expect((await run(['sum', '--input', 'novalue'])).code).toBe(2);
    expect((await run(['sum', '--input-json', '{oops'])).code).toBe(2);
    expect((await run(['sum', '--input', 'a=1', '--concurrency', '0'])).code).toBe(2);
    for (const r of [bad, unknown]) expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('dangerous tools need --approve', async () => {
    const denied = await run(['danger']);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('APPROVAL_DENIED');
    // Said once where it happened, with what to do about it.
    expect(denied.stderr).toMatch(/error: APPROVAL_DENIED the call to dangerous tool '([\w/]+)' in step '\w+' was not approved\nhint: allow it with --approve \1,/);
    const approved = await run(['danger', '--approve', 'wipe']);
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout)).toEqual({ wiped: true });
  });

  it('refuses an --approve that names no installed tool, before the run starts', async () => {
    const typo = await run(['danger', '--approve', 'wype']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe("error: USAGE --approve wype: no such tool is installed (did you mean 'wipe'?)\n");
  });

  it('refuses an --input key given twice; --input wins over --input-json', async () => {
    const twice = await run(['sum', '--input', 'a=1', '--input', 'a=2']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('USAGE --input a= is given twice');
    const over = await run(['sum', '--input-json', '{"a": 1}', '--input', 'a=3']);
    expect(JSON.parse(over.stdout)).toEqual({ total: 14 });
  });

  it('--help of a command shows the global options, examples and exit codes', async () => {
    const { io, out } = fakeIO();
    await main(['run', '--help'], io);
    expect(out.stdout).toMatch(/Global Options:\n(.*\n)*\s+--chains <dir>/);
    expect(out.stdout).toMatch(/Examples:\n\s+\$ toolchain run city_brief --input question=/);
    expect(out.stdout).toContain('Exit codes:\n  0    success\n  1    a run failed');
  });

  it('shows per-step progress on stderr only when it is a terminal', async () => {
    const plain = await run(['sum', '--input', 'a=1']);
    expect(plain.stderr).toMatch(/^run [0-9a-f-]{36}\n$/);
    const tty = await run(['sum', '--input', 'a=1'], { tty: true });
    expect(tty.stderr).toMatch(/✓.* first/);
    expect(tty.stderr).toMatch(/✓.* second/);
    expect(tty.stdout).toContain('"total": 12');
  });
});

describe('toolchain run (child process)', () => {
  // Built into a private folder so a concurrent `npm run build` or someone else's half-written
  // file cannot break the run (tsc still emits when other files have type errors).
  const out = join(REPO, 'node_modules', '.cache', 'toolchain-cli-run-test');
  const launcher = join(out, 'launch.mjs');
  beforeAll(() => {
    mkdirSync(out, { recursive: true });
    try {
      execFileSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(REPO, 'tsconfig.build.json'), '--outDir', out, '--declaration', 'false', '--sourceMap', 'false'], { stdio: 'pipe' });
    } catch {
      // Type errors elsewhere still emit JavaScript; a missing file will show in the tests.
    }
    writeFileSync(
      launcher,
      "import { main } from './cli/main.js';\nprocess.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, cwd: process.cwd(), env: process.env });\n",
    );
  }, 120_000);

  const cli = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(process.execPath, [launcher, ...DIRS, 'run', ...args], { cwd: REPO, timeout: 20_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, stdout, stderr });
      });
    });

  it('success (0) and --json', async () => {
    const ok = await cli(['sum', '--input', 'a=5']);
    expect(ok).toMatchObject({ code: 0, stderr: expect.stringMatching(/^run [0-9a-f-]{36}\n$/) });
    expect(JSON.parse(ok.stdout)).toEqual({ total: 16 });
    const json = await cli(['sum', '--input', 'a=5', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'succeeded', outputs: { total: 16 } });
  });

  it('Ctrl-C cancels the run and exits 130', async () => {
    const child = spawn(process.execPath, [launcher, ...DIRS, 'run', 'slow', '--json'], { cwd: REPO });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    // The run id comes first on stderr, in the same turn as Ctrl-C starts being handled.
    await new Promise<void>((resolve) => {
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (/^run \S+\n/m.test(stderr)) resolve();
      });
    });
    await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(130);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'cancelled', error: { code: 'ABORTED' }, steps: { wait: { status: 'failed', error: { code: 'ABORTED' } } } });
  });

  it('failure (1) and bad input (2)', async () => {
    const failed = await cli(['broken']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('ALWAYS');
    const bad = await cli(['sum', '--input', 'a=x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('INPUT_INVALID');
    expect(bad.stderr + failed.stderr).not.toMatch(STACK_LINE);
  });
});

describe('toolchain run --debug (the shipped launcher)', () => {
  const debugDirs = ['--chains', join(import.meta.dirname, '..', 'fixtures', 'debug', 'chains'), '--plugins', join(import.meta.dirname, '..', 'fixtures', 'debug', 'plugins')];

  it("shows a TypeScript handler's stack at its own file and line, and the engine's frames at theirs, in text and in --json", async () => {
    const plain = await runCli([...debugDirs, 'run', 'explode', '--store', 'memory:']);
    expect(plain.code).toBe(1);
    expect(plain.stderr).not.toMatch(STACK_LINE);
    const boom = join(import.meta.dirname, '..', 'fixtures', 'debug', 'plugins', 'deep', 'tools', 'boom.ts');
    const text = await runCli([...debugDirs, '--debug', 'run', 'explode', '--store', 'memory:']);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain("error: TOOL_ERROR boom 7 (step 's')\nError: boom 7\n");
    expect(text.stderr).toContain(`    at inner (${boom}:4:9)\n    at boom (${boom}:8:10)\n`);
    // The CLI bundle's frames, through its source map, name the TypeScript sources (here the
    // plugin loader's handler that loads the tool's module on its first call).
    expect(text.stderr).toMatch(/ \(.*src\/[a-z-]+\/[a-z-]+\.ts:\d+:\d+\)/);
    const json = await runCli([...debugDirs, '--debug', 'run', 'explode', '--json', '--store', 'memory:']);
    const result = JSON.parse(json.stdout) as { error: { stack: string }; steps: { s: { error: { stack: string } } } };
    expect(result.error.stack).toContain(`at inner (${boom}:4:9)`);
    expect(result.steps.s.error.stack).toBe(result.error.stack);
  });
});
