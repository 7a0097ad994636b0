import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from '../helpers/browser.js';
import { REPO } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// Re-runs over HTTP and in the inspector, against `node bin/toolchain.js serve` with a SQLite
// store: POST /api/runs/ID/rerun and what GET /api/runs/ID then says of both runs, and the "Re-run
// from here" button of a step on the run page, in real headless Chromium. The tool writes a line
// per call, so each test sees which steps ran.

const FIXTURE = join(REPO, 'test', 'fixtures', 'rerun');
const root = mkdtempSync(join(tmpdir(), 'toolchain-browser-rerun-'));
cpSync(join(FIXTURE, 'chains'), join(root, 'chains'), { recursive: true });
const log = join(root, 'work.log');
let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  serve = await startServe({
    cwd: root,
    globals: ['--chains', join(root, 'chains'), '--plugins', join(FIXTURE, 'plugins')],
    args: ['--no-watch', '--no-recover'],
    env: { TOOLCHAIN_STORE: `sqlite:${join(root, 'runs.db')}`, WORK_LOG: log },
  });
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  rmSync(root, { recursive: true, force: true });
});
beforeEach(() => writeFileSync(log, ''));

function ran(): string[] {
  const lines = readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
  writeFileSync(log, '');
  return lines;
}

const post = (path: string, body?: unknown): Promise<Response> =>
  fetch(`${serve.url}${path}`, { method: 'POST', ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });

interface Detail {
  run_id: string;
  status: string;
  outputs: unknown;
  rerun_of?: string;
  rerun_from?: string;
  reruns?: string[];
  steps: Record<string, { status: string; kept_from?: string }>;
}

async function ended(id: string): Promise<Detail> {
  for (;;) {
    const detail = (await (await fetch(`${serve.url}/api/runs/${encodeURIComponent(id)}`)).json()) as Detail;
    if (detail.status !== 'running') return detail;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function origin(): Promise<string> {
  const started = (await (await post('/api/runs?wait=true', { chain: 'diamond', input: {} })).json()) as { run_id: string; status: string };
  expect(started.status).toBe('succeeded');
  expect(ran().sort()).toEqual(['a', 'b', 'c', 'd v1']);
  return started.run_id;
}

describe('re-runs over HTTP', () => {
  it('POST /api/runs/ID/rerun starts a new run from a step; both runs name each other', async () => {
    const id = await origin();
    const res = await post(`/api/runs/${id}/rerun`, { from: 'c', input: { tag: 'v2' } });
    expect(res.status).toBe(202);
    const { run_id } = (await res.json()) as { run_id: string };
    expect(res.headers.get('location')).toBe(`/api/runs/${run_id}`);
    expect(run_id).not.toBe(id);
    const again = await ended(run_id);
    expect(again).toMatchObject({ status: 'succeeded', outputs: { b: 11, c: 110, d: 121 }, rerun_of: id, rerun_from: 'c' });
    expect(again.steps.a).toMatchObject({ status: 'succeeded', kept_from: id });
    expect(again.steps.b).toMatchObject({ status: 'succeeded', kept_from: id });
    expect(again.steps.c!.kept_from).toBeUndefined();
    expect(ran()).toEqual(['c', 'd v2']);
    expect((await ended(id)).reruns).toEqual([run_id]);
  });

  it('answers what it refuses with its code: 400 STEP_NOT_FOUND, 409 RERUN_INPUT_READ, 404 for an unknown run, 400 for a bad body', async () => {
    const id = await origin();
    const unknown = await post(`/api/runs/${id}/rerun`, { from: 'cc' });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'STEP_NOT_FOUND', message: expect.stringContaining("did you mean 'c'?") });
    const read = await post(`/api/runs/${id}/rerun`, { from: 'c', input: { y: 3 } });
    expect(read.status).toBe(409);
    expect(((await read.json()) as { error: { code: string } }).error.code).toBe('RERUN_INPUT_READ');
    expect((await post('/api/runs/no-such-run/rerun', {})).status).toBe(404);
    const bad = await post(`/api/runs/${id}/rerun`, { form: 'c' });
    expect(bad.status).toBe(400);
    expect(ran()).toEqual([]);
  });
});

describe('Re-run from here', () => {
  it('re-runs a run from the selected step; the new page names its origin and its kept steps, the origin lists it', async () => {
    const id = await origin();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${serve.url}/#/runs/${id}`);
    await page.locator('section.run[data-status="succeeded"]').waitFor({ timeout: 10_000 });
    await page.locator('.gantt-row[data-step="b"] button').click();
    await page.locator('.step-detail[data-step="b"]').waitFor();
    await page.getByRole('button', { name: 'Re-run from here' }).click();
    // The new run's page: its origin named, then succeeded.
    await page.locator('.facts .origin').waitFor({ timeout: 10_000 });
    expect(await page.locator('.facts .origin').textContent()).toContain(`re-run of ${id} from step b`);
    await page.locator('section.run[data-status="succeeded"]').waitFor({ timeout: 10_000 });
    const newId = decodeURIComponent(new URL(page.url()).hash.replace('#/runs/', ''));
    expect(newId).not.toBe(id);
    expect(ran()).toEqual(['b', 'd v1']);
    await page.locator('.gantt-row.kept[data-step="a"]').waitFor({ timeout: 5000 });
    expect(await page.locator('.gantt-row.kept').count()).toBe(2);
    await page.locator('.gantt-row[data-step="c"] button').click();
    expect(await page.locator('.step-detail .notice.kept').textContent()).toContain(id);
    await page.screenshot({ path: join(ARTIFACTS, 'rerun-from-here.png') });
    // Back to the origin: it lists the re-run, which links to it.
    await page.locator('.facts .origin a').click();
    await page.locator(`.reruns a[href="#/runs/${encodeURIComponent(newId)}"]`).waitFor({ timeout: 10_000 });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
