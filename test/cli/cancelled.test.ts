import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { privateQueueRedis, startWorker } from '../helpers/queue-cluster.js';
import { REPO, runCli } from '../helpers/run-cli.js';
import { startServe } from '../helpers/serve-cli.js';

// A cancelled run is reported as cancelled wherever it is reported: the summary line after Ctrl-C
// (in a real terminal, tmux), the result given again to whoever starts the same run id (the CLI,
// POST /api/runs), and the line of a run a queue's worker was to execute.

const FIXTURE = join(REPO, 'test', 'fixtures', 'durable');
const DIRS = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
const root = mkdtempSync(join(tmpdir(), 'toolchain-cancelled-'));
const SOCKET = `toolchain-cancel-${process.pid}`;
afterAll(async () => {
  await tmux('kill-server').catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
});

function tmux(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('tmux', ['-L', SOCKET, ...args], { cwd: REPO, timeout: 10_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Starts `toolchain ARGS` in a terminal of its own; `screen()` reads it. */
async function inTerminal(session: string, args: readonly string[]): Promise<{ screen(): Promise<string>; until(pattern: RegExp, ms?: number): Promise<string> }> {
  const command = `cd ${quote(root)} && node ${quote(join(REPO, 'bin', 'toolchain.js'))} ${args.map(quote).join(' ')}; echo EXIT=$?; sleep 60`;
  await tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '30', command);
  const screen = (): Promise<string> => tmux('capture-pane', '-p', '-J', '-t', session);
  return {
    screen,
    async until(pattern, ms = 20_000) {
      const deadline = Date.now() + ms;
      let text = '';
      while (Date.now() < deadline) {
        text = await screen();
        if (pattern.test(text)) return text;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the terminal never showed ${pattern}:\n${text}`);
    },
  };
}

describe('a cancelled run', () => {
  it('Ctrl-C: the summary line says cancelled, and the run id given again answers cancelled', async () => {
    const store = `sqlite:${join(root, 'ctrl-c.db')}`;
    const term = await inTerminal('local', [...DIRS, 'run', 'slow', '--run-id', 'ctrl-c-1', '--store', store]);
    await term.until(/◔ wait|wait\s+\d/);
    await tmux('send-keys', '-t', 'local', 'C-c');
    const screen = await term.until(/EXIT=\d+/);
    expect(screen).toMatch(/EXIT=130/);
    expect(screen).toMatch(/⊘ slow cancelled in \d/);
    expect(screen).not.toMatch(/slow failed/);
    const again = await runCli([...DIRS, 'run', 'slow', '--run-id', 'ctrl-c-1', '--store', store, '--json'], { cwd: root });
    expect(JSON.parse(again.stdout)).toMatchObject({ run_id: 'ctrl-c-1', status: 'cancelled', error: { code: 'ABORTED' } });
  }, 40_000);

  it('POST /api/runs with the id of a cancelled run answers cancelled, from this server and from another process', async () => {
    const store = `sqlite:${join(root, 'serve.db')}`;
    const serve = await startServe({ cwd: root, globals: DIRS, args: ['--no-watch'], env: { TOOLCHAIN_STORE: store } });
    try {
      const post = (path: string, body?: unknown): Promise<Response> =>
        fetch(`${serve.url}${path}`, { method: 'POST', ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
      expect((await post('/api/runs', { chain: 'slow', run_id: 'http-1' })).status).toBe(202);
      expect((await post('/api/runs/http-1/cancel')).status).toBe(200);
      const replay = (await (await post('/api/runs?wait=true', { chain: 'slow', run_id: 'http-1' })).json()) as { status: string };
      expect(replay).toMatchObject({ run_id: 'http-1', status: 'cancelled' });
    } finally {
      await serve.stop();
    }
    const cli = await runCli([...DIRS, 'run', 'slow', '--run-id', 'http-1', '--store', store, '--json'], { cwd: root });
    expect(JSON.parse(cli.stdout)).toMatchObject({ run_id: 'http-1', status: 'cancelled' });
    // A server started again answers from the store alike.
    const again = await startServe({ cwd: root, globals: DIRS, args: ['--no-watch'], env: { TOOLCHAIN_STORE: store } });
    try {
      const replay = await (await fetch(`${again.url}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: 'slow', run_id: 'http-1' }) })).json();
      expect(replay).toMatchObject({ run_id: 'http-1', status: 'cancelled' });
    } finally {
      await again.stop();
    }
  }, 40_000);

  it('with --queue: cancelled before a worker took it, the line says cancelled and ends without a dangling colon', async () => {
    const redis = await privateQueueRedis();
    const worker: { current?: ReturnType<typeof startWorker> } = {};
    try {
      const term = await inTerminal('queued', [...DIRS, 'run', 'slow', '--queue', redis.url]);
      await term.until(/^run \S+$/m);
      await tmux('send-keys', '-t', 'queued', 'C-c');
      // The worker comes after the cancel: it finds the run cancelled and records it so.
      await new Promise((r) => setTimeout(r, 500));
      worker.current = startWorker({ queue: redis.url, chains: join(FIXTURE, 'chains'), plugins: join(FIXTURE, 'plugins'), args: ['--stalled-interval', '1s'] });
      const screen = await term.until(/EXIT=\d+/, 30_000);
      const line = screen.split('\n').find((l) => l.includes('slow cancelled'));
      expect(line, screen).toMatch(/^⊘ slow cancelled in \S+$/);
    } finally {
      worker.current?.kill('SIGKILL');
      await worker.current?.exited;
      await redis.destroy();
    }
  }, 60_000);
});
