import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, runCli } from '../helpers/run-cli.js';
import { startServe } from '../helpers/serve-cli.js';

// A request refused before a run could start — an unknown chain, an input its chain refuses — is
// no run: it is not recorded, not counted in toolchain_runs_total, and a mistyped chain name leaves
// no .toolchain/ in the folder the user stands in. The input a run is recorded with is the one its
// steps saw: `--input ms=150` is the number 150 where the schema says integer.

const FIXTURE = join(REPO, 'test', 'fixtures', 'durable');
const DIRS = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
const root = mkdtempSync(join(tmpdir(), 'toolchain-refusals-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('refusals are not runs', () => {
  it('the CLI: a mistyped chain name creates no .toolchain/; a refused input records no run; a run records its coerced input', async () => {
    const typo = await runCli([...DIRS, 'run', 'lin'], { cwd: root });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("CHAIN_NOT_FOUND no chain named 'lin' (did you mean 'line'?)");
    expect(existsSync(join(root, '.toolchain'))).toBe(false);
    const bad = await runCli([...DIRS, 'run', 'line', '--input', 'ms=soon'], { cwd: root });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('INPUT_INVALID');
    const ok = await runCli([...DIRS, 'run', 'line', '--input', 'ms=1', '--run-id', 'typed-1'], { cwd: root });
    expect(ok.code).toBe(0);
    const listed = JSON.parse((await runCli([...DIRS, 'runs', '--json'], { cwd: root })).stdout) as { run_id: string }[];
    expect(listed.map((r) => r.run_id)).toEqual(['typed-1']);
    const shown = JSON.parse((await runCli([...DIRS, 'runs', 'show', 'typed-1', '--json'], { cwd: root })).stdout) as { input: unknown };
    expect(shown.input).toEqual({ ms: 1, start: 0 });
  }, 30_000);

  it('serve: 400 refusals are not listed and not counted in toolchain_runs_total', async () => {
    const serve = await startServe({ cwd: root, globals: DIRS, args: ['--no-watch'], env: { TOOLCHAIN_STORE: `sqlite:${join(root, 'serve.db')}` } });
    try {
      const post = (body: unknown): Promise<Response> => fetch(`${serve.url}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await post({ chain: 'lin' })).status).toBe(400);
      const refused = await post({ chain: 'line', input: { ms: 'soon' }, run_id: 'refused-1' });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('INPUT_INVALID');
      expect((await post({ chain: 'line', input: { ms: 'soon' } })).status).toBe(400);
      const ran = (await (await post({ chain: 'line', input: { ms: 0 } })).json()) as { run_id: string; status: string };
      expect(ran.status).toBe('succeeded');
      const runs = ((await (await fetch(`${serve.url}/api/runs`)).json()) as { runs: { run_id: string }[] }).runs;
      expect(runs.map((r) => r.run_id)).toEqual([ran.run_id]);
      expect((await fetch(`${serve.url}/api/runs/refused-1`)).status).toBe(404);
      const metrics = await (await fetch(`${serve.url}/metrics`)).text();
      expect(metrics).toContain('toolchain_runs_total{chain="line",status="succeeded"} 1');
      expect(metrics).not.toMatch(/toolchain_runs_total\{[^}]*status="failed"\}/);
    } finally {
      await serve.stop();
    }
  }, 30_000);
});
