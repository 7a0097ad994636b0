import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { REPO, runCli } from '../helpers/run-cli.js';

// Runs that wait, as users meet them: the real CLI from bin/, a project of its own with the
// shipped plugins and a SQLite store. A `run` waits with its run in-process; another process
// sends the event (`emit`) or decides the request (`approvals`), and the waiting `run` goes on.

const BIN = join(REPO, 'bin', 'toolchain.js');
const root = mkdtempSync(join(tmpdir(), 'toolchain-cli-waits-'));
const chains = join(root, 'chains');
const files = join(root, 'files');
mkdirSync(chains);
mkdirSync(files);
const store = `sqlite:${join(root, 'runs.db')}`;
const env = { TOOLCHAIN_STORE: store, TOOLCHAIN_FILES_ROOT: files };
const dirs = ['--chains', chains, '--plugins', join(REPO, 'plugins')];
afterAll(() => rmSync(root, { recursive: true, force: true }));

writeFileSync(
  join(chains, 'order.yaml'),
  `name: order
inputs: { order: integer }
steps:
  - name: paid
    wait_for: { event: payment.settled, match: { order: $.order } }
outputs: { amount: $.paid.amount }
`,
);
writeFileSync(
  join(chains, 'release.yaml'),
  `name: release
inputs: { version: string }
steps:
  - name: ok
    approval: { prompt: "Release {{ $.version }}?" }
outputs: { decision: $.ok }
`,
);
writeFileSync(
  join(chains, 'note.yaml'),
  `name: note
steps:
  - name: write
    tool: write_file
    input_map: { path: note.txt, content: approved }
`,
);

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
});

/** Starts `toolchain ARGS` and collects its output; `line(re)` resolves at the first stderr line matching. */
function start(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...dirs, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let stdout = '';
  let stderr = '';
  const waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const w of waiters.splice(0)) {
      const m = stderr.match(w.re);
      if (m) w.resolve(m);
      else waiters.push(w);
    }
  });
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return {
    line: (re: RegExp): Promise<RegExpMatchArray> => new Promise((resolve) => (stderr.match(re) ? resolve(stderr.match(re)!) : waiters.push({ re, resolve }))),
    done: async () => ({ code: await exited, stdout, stderr }),
  };
}

const cli = (args: string[]) => runCli([...dirs, ...args], { cwd: root, env });

describe('waiting runs from the command line', () => {
  it('a run waiting for an event goes on when another process emits it; a repeated event id is not delivered', async () => {
    const run = start(['run', 'order', '--input', 'order=7']);
    const [, runId] = await run.line(/run (\S+) waits for event 'payment.settled'/);
    const listed = await cli(['runs', 'list', '--status', 'waiting', '--json']);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ run_id: runId, status: 'waiting', chain: 'order' }]);
    const shown = await cli(['runs', 'show', runId!]);
    expect(shown.stdout).toContain("waits for event payment.settled at step paid: send it with 'toolchain emit payment.settled'");
    expect(JSON.parse((await cli(['runs', 'show', runId!, '--json'])).stdout)).toMatchObject({ status: 'waiting', waiting_for: [{ kind: 'event', name: 'payment.settled', step: 'paid' }], wake_at: null });
    const early = await cli(['resume', runId!]);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain('RUN_WAITING');
    const other = await cli(['emit', 'payment.settled', '--data', '{"order": 8, "amount": 1}']);
    expect(other.stdout).toContain('delivered to 0 waiting runs');
    const sent = await cli(['emit', 'payment.settled', '--data', '{"order": 7, "amount": 12}', '--id', 'pay-7']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain(`delivered to 1 waiting run (${runId})`);
    const again = await cli(['emit', 'payment.settled', '--data', '{"order": 7, "amount": 99}', '--id', 'pay-7']);
    expect(again.stdout).toContain('was sent before');
    const finished = await run.done();
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout)).toEqual({ amount: 12 });
  });

  it('an approval step is decided with toolchain approvals; the decider and comment are recorded', async () => {
    const run = start(['run', 'release', '--input', 'version=2.0']);
    const [, id] = await run.line(/approval (ap_\S+): Release 2\.0\?/);
    const list = await cli(['approvals', '--json']);
    expect(JSON.parse(list.stdout)).toMatchObject([{ id, chain: 'release', step: 'ok', prompt: 'Release 2.0?' }]);
    const decided = await cli(['approvals', 'approve', id!, '--by', 'ada', '--comment', 'ship it']);
    expect(decided.code).toBe(0);
    expect(decided.stdout).toContain(`${id} approved by ada`);
    const twice = await cli(['approvals', 'deny', id!]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('APPROVAL_REFUSED');
    const finished = await run.done();
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ decision: { approved: true, by: 'ada', comment: 'ship it' } });
  });

  it('without a terminal a dangerous call is refused, unless --wait-approvals makes it a request', async () => {
    const refused = await cli(['run', 'note']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('APPROVAL_DENIED');
    expect(refused.stderr).toContain('--wait-approvals');
    const run = start(['run', 'note', '--wait-approvals']);
    const [, id] = await run.line(/approval (ap_\S+): step 'write' wants to call dangerous tool 'files\/write_file'/);
    const list = JSON.parse((await cli(['approvals', '--json'])).stdout) as { id: string; args: unknown }[];
    expect(list.find((a) => a.id === id)?.args).toMatchObject({ path: 'note.txt', content: 'approved' });
    expect((await cli(['approvals', 'approve', id!])).code).toBe(0);
    expect((await run.done()).code).toBe(0);
    expect(readFileSync(join(files, 'note.txt'), 'utf8')).toBe('approved');
  });

  it('runs cancel ends a waiting run at once', async () => {
    const run = start(['run', 'order', '--input', 'order=9']);
    const [, runId] = await run.line(/run (\S+) waits for/);
    const cancelled = await cli(['runs', 'cancel', runId!]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain('was waiting; it is cancelled');
    const finished = await run.done();
    expect(finished.code).not.toBe(0);
    const shown = JSON.parse((await cli(['runs', 'show', runId!, '--json'])).stdout) as { status: string };
    expect(shown.status).toBe('cancelled');
  });
});
