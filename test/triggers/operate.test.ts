import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';
import { readSse, type SseMessage } from '../helpers/sse-client.js';

// Operating triggers with real processes: `toolchain serve` from bin/ (with a token) fires an
// `every: 1s` trigger on a SQLite store file; `toolchain triggers pause` from bin/, another process
// on the same file, stops it (the server sees the pause, says so on its trigger event stream and in
// its log, and fires no tick after that); GET /api/triggers shows the pause, and POST
// /api/triggers/CHAIN%23ID/resume starts it again from then, with no burst of the ticks it had.

const TOKEN = 'triggers-test-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const project = mkdtempSync(join(tmpdir(), 'toolchain-triggers-operate-'));
const db = join(project, 'runs.db');
const STORE = `sqlite:${db}`;
const env = { TOOLCHAIN_CACHE_DIR: join(project, 'cache') };
let serve: ServeProcess;
const messages: SseMessage[] = [];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => Promise<T> | T, check: (value: T) => boolean, what: string, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

async function api(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = AUTH): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON answers of many shapes
  const res = await fetch(`${serve.url}${path}`, { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: await res.json() };
}

/** The ticks (ms) of the `sec` trigger's runs in the store, ascending. */
async function ticks(): Promise<number[]> {
  const store = await openStore(STORE);
  try {
    const ids = (await store.listRuns({ chain: 'nightly', limit: 1000 })).map((r) => r.id).filter((id) => id.startsWith('nightly#sec@'));
    return ids.map((id) => {
      const m = /@(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(id)!;
      return Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
    }).sort((a, b) => a - b);
  } finally {
    await store.close();
  }
}

const events = (type: string): any[] => messages.filter((m) => m.event === type).map((m) => JSON.parse(m.data)); // eslint-disable-line @typescript-eslint/no-explicit-any -- events as JSON

beforeAll(async () => {
  mkdirSync(join(project, 'chains'));
  mkdirSync(join(project, 'plugins'));
  writeFileSync(join(project, 'chains', 'nightly.yaml'), 'name: nightly\ntriggers:\n  - every: 1s\n    id: sec\n    overlap: allow\n  - schedule: "0 6 * * 1-5"\n    timezone: Europe/Paris\nsteps:\n  - name: nap\n    sleep: 1ms\n');
  serve = await startServe({ cwd: project, args: ['--no-watch', '--store', STORE], env: { ...env, TOOLCHAIN_TOKEN: TOKEN } });
  // The server's trigger events, as a client of its stream sees them.
  void readSse(`${serve.url}/api/triggers/events`, AUTH, (m) => void messages.push(m)).catch(() => undefined);
}, 30_000);
afterAll(async () => {
  await serve?.stop();
  rmSync(project, { recursive: true, force: true });
});

describe('operating triggers across processes', () => {
  it('lists the triggers over HTTP: next fire times, last run and how it ended', async () => {
    const listed = await until(() => api('GET', '/api/triggers'), (r) => r.body.triggers?.[0]?.last?.status === 'succeeded', 'a run of nightly#sec');
    expect(listed.status).toBe(200);
    const [sec, morning] = listed.body.triggers;
    expect(sec).toMatchObject({ chain: 'nightly', id: 'sec', kind: 'every', every_seconds: 1, enabled: true, overlap: 'allow', last: { run_id: expect.stringMatching(/^nightly#sec@\d{8}T\d{6}Z$/), status: 'succeeded' } });
    expect(sec.next).toHaveLength(3);
    expect(sec.paused).toBeUndefined();
    expect(morning).toMatchObject({ id: '2', kind: 'schedule', schedule: '0 6 * * 1-5', timezone: 'Europe/Paris' });
    expect(morning.next).toHaveLength(3);
    // A tick's run, by its id (`#` and `@` sent encoded), as the inspector's link to it asks.
    const shown = await api('GET', `/api/runs/${encodeURIComponent(sec.last.run_id)}`);
    expect(shown).toMatchObject({ status: 200, body: { run_id: sec.last.run_id, chain: 'nightly', status: 'succeeded' } });
    expect((await api('GET', '/api/triggers?chain=other')).body).toEqual({ triggers: [] });
    expect((await api('GET', '/api/triggers', undefined, {})).status).toBe(401);
    // The stream has said what fired.
    await until(() => events('trigger:fired'), (e) => e.length > 0, 'trigger:fired on the stream');
    expect(events('trigger:fired')[0]).toMatchObject({ chain: 'nightly', trigger: 'sec', run_id: expect.stringMatching(/^nightly#sec@/) });
  });

  it('the CLI pauses it in the store; the server stops firing it; resumed over HTTP it starts from then', async () => {
    const paused = await runCli(['triggers', 'pause', 'nightly#sec', '--by', 'ada', '--reason', 'database migration', '--store', STORE], { cwd: project, env });
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain('nightly#sec paused by ada');
    const [seen] = await until(() => events('trigger:paused'), (e) => e.length > 0, 'trigger:paused on the stream');
    expect(seen).toMatchObject({ chain: 'nightly', trigger: 'sec', by: 'ada', reason: 'database migration' });
    const firedBefore = (await ticks()).length;
    await sleep(3_000);
    const during = await ticks();
    // No tick after the server saw the pause; at most one that its look had under way as the pause was written.
    expect(during.filter((t) => t > seen.timestamp)).toEqual([]);
    expect(during.length - firedBefore).toBeLessThanOrEqual(1);

    const listed = (await api('GET', '/api/triggers')).body.triggers;
    expect(listed[0]).toMatchObject({ id: 'sec', next: [], paused: { by: 'ada', at: new Date(seen.at).toISOString(), reason: 'database migration' } });
    expect(listed[1].paused).toBeUndefined();
    const cli = await runCli(['triggers', '--json', '--store', STORE], { cwd: project, env });
    expect(JSON.parse(cli.stdout)[0].paused).toEqual({ by: 'ada', at: new Date(seen.at).toISOString(), reason: 'database migration' });
    const metrics = await (await fetch(`${serve.url}/metrics`, { headers: AUTH })).text();
    expect(metrics).toMatch(/^toolchain_triggers_paused 1$/m);
    expect(metrics).not.toMatch(/outcome="skipped"/);
    // The log says so, with who paused it.
    expect(serve.stdout()).toMatch(/"event":"trigger:paused".*"by":"ada"/);

    // Resumed over HTTP: the decider is the server's word for the caller.
    const resumedAt = Date.now();
    const resumed = await api('POST', '/api/triggers/nightly%23sec/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.triggers).toEqual([expect.objectContaining({ id: 'sec', changed: true })]);
    expect(resumed.body.triggers[0].paused).toBeUndefined();
    await until(() => events('trigger:resumed'), (e) => e.length > 0, 'trigger:resumed on the stream');
    const after = await until(ticks, (t) => t.filter((x) => x > resumedAt).length >= 2, 'two ticks after the resume');
    // Nothing from the paused seconds: no burst on resume.
    expect(after.filter((t) => t > seen.timestamp && t <= resumedAt - 1000)).toEqual([]);
    const first = after.find((t) => t > seen.timestamp)!;
    expect(first - resumedAt).toBeLessThanOrEqual(1000);
    expect(serve.stdout()).toContain('"event":"trigger:resumed"');
  }, 40_000);

  it('pauses over HTTP as the server names the caller, refuses unknown names with a did-you-mean, and cross-site requests', async () => {
    const paused = await api('POST', '/api/triggers/nightly/pause', { reason: 'all of it' });
    expect(paused.status).toBe(200);
    expect(paused.body.triggers.map((t: { id: string; changed: boolean; paused: { by: string } }) => [t.id, t.changed, t.paused.by])).toEqual([
      ['sec', true, 'token'],
      ['2', true, 'token'],
    ]);
    expect((await api('POST', '/api/triggers/nightly%23sec/pause')).body.triggers[0]).toMatchObject({ changed: false, paused: { by: 'token', reason: 'all of it' } });
    expect(await api('POST', '/api/triggers/nightly%23secc/pause', {})).toEqual({ status: 404, body: { error: { code: 'TRIGGER_NOT_FOUND', message: "chain 'nightly' has no trigger 'secc' (its triggers: nightly#sec, nightly#2) (did you mean 'sec'?)" } } });
    expect(await api('POST', '/api/triggers/nightley/resume')).toEqual({ status: 404, body: { error: { code: 'CHAIN_NOT_FOUND', message: "no chain named 'nightley' (did you mean 'nightly'?)" } } });
    expect((await api('POST', '/api/triggers/nightly/pause', { by: 'mallory' })).body.error.code).toBe('BAD_REQUEST');
    expect((await api('POST', '/api/triggers/nightly/resume', undefined, { ...AUTH, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await api('POST', '/api/triggers/nightly/resume', undefined, {})).status).toBe(401);
    const resumed = await api('POST', '/api/triggers/nightly/resume');
    expect(resumed.body.triggers.map((t: { changed: boolean }) => t.changed)).toEqual([true, true]);
    expect((await runCli(['triggers', '--store', STORE], { cwd: project, env })).stdout).not.toContain('paused');
  });

  it('the CLI refuses an unknown chain or trigger with its code and a did-you-mean, and touches no store', async () => {
    const other = join(project, 'never.db');
    const chain = await runCli(['triggers', 'pause', 'nightley', '--store', `sqlite:${other}`], { cwd: project, env });
    expect(chain.code).toBe(2);
    expect(chain.stderr).toContain("CHAIN_NOT_FOUND no chain named 'nightley' (did you mean 'nightly'?)");
    const trigger = await runCli(['triggers', 'resume', 'nightly#sek', '--store', `sqlite:${other}`], { cwd: project, env });
    expect(trigger.code).toBe(2);
    expect(trigger.stderr).toContain("TRIGGER_NOT_FOUND chain 'nightly' has no trigger 'sek' (its triggers: nightly#sec, nightly#2) (did you mean 'sec'?)");
    expect(existsSync(other)).toBe(false);
  });
});
