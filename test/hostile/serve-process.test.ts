import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../fixtures/plugins/helpers.js';
import { REPO } from '../helpers/run-cli.js';

// Plugin containment in `toolchain serve`: with `--isolation none` a handler's late
// exception or `process.exit` used to end the server. Now the first is logged (a JSON line naming
// the plugin) and the second fails its run with TOOL_CRASHED; the server keeps serving.

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'isolation');
let child: ChildProcessWithoutNullStreams;
let url: string;
let stdout = '';

beforeAll(async () => {
  child = spawn(process.execPath, [join(REPO, 'bin', 'toolchain.js'), 'serve', '--port', '0', '--no-watch', '--isolation', 'none', '--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')], {
    cwd: FIXTURE,
    env: { ...process.env, TOOLCHAIN_TOKEN: '' },
  });
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  let stderr = '';
  url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /inspector at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.on('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
  });
}, 30_000);
afterAll(() => {
  child.kill('SIGKILL');
});

const run = async (chain: string): Promise<Record<string, unknown>> => {
  const res = await fetch(`${url}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain }) });
  return (await res.json()) as Record<string, unknown>;
};

describe('toolchain serve --isolation none with a misbehaving plugin', () => {
  it("logs an exception a handler's timer throws during a run, naming the plugin, and keeps serving", async () => {
    expect(await run('late_throw')).toMatchObject({ status: 'succeeded' });
    await waitFor(() => expect(stdout).toContain('process:uncaught'));
    const line = stdout.split('\n').find((l) => l.includes('process:uncaught'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 40, msg: expect.stringContaining("an uncaught exception from plugin 'rogue': thrown from a timer after returning") });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('fails a run whose handler calls process.exit with TOOL_CRASHED, and keeps serving', async () => {
    expect(await run('quits')).toMatchObject({ status: 'failed', error: { code: 'TOOL_CRASHED', step: 's' } });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(child.exitCode).toBeNull();
  });
});
