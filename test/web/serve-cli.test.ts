import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from '../helpers/browser.js';
import { startHeldRun } from '../helpers/killed-run.js';
import { REPO, runCli } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// The run inspector as a user gets it from a clone: `node bin/toolchain.js serve` (the built CLI
// bundle, not the sources), opened in real headless Chromium.

const FIXTURE = join(REPO, 'test', 'fixtures', 'durable');
const DIRS = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
const root = mkdtempSync(join(tmpdir(), 'toolchain-serve-cli-'));
const STORE = `sqlite:${join(root, 'runs.db')}`;
let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  serve = await startServe({ cwd: root, globals: DIRS, args: ['--no-watch', '--no-recover'], env: { TOOLCHAIN_STORE: STORE } });
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('toolchain serve from bin/', () => {
  it('serves the built inspector, which renders the runs list and a run', async () => {
    const started = (await (await fetch(`${serve.url}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: 'line', input: { ms: 0 } }) })).json()) as { run_id: string; status: string };
    expect(started.status).toBe('succeeded');
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${serve.url}/`);
    await page.locator(`table.runs tr[data-run="${started.run_id}"]`).waitFor({ timeout: 10_000 });
    await page.locator(`tr[data-run="${started.run_id}"] a`).click();
    await page.locator('section.run[data-status="succeeded"]').waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'serve-cli-run.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('serves only built files: the page revalidated, hashed assets cached for good, no source file', async () => {
    const page = await fetch(`${serve.url}/`);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const html = await page.text();
    expect(html).not.toMatch(/\.tsx/);
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${serve.url}/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    for (const source of ['vite.config.ts', 'src/main.tsx', 'tsconfig.json', '.vite/manifest.json']) {
      expect((await fetch(`${serve.url}/${source}`)).status, source).toBe(404);
    }
  });

  it('shows a run whose process was killed with kill -9 as interrupted, and resumes it with the Resume button', async () => {
    const held = await startHeldRun([...DIRS, 'run', 'line', '--input', 'ms=150', '--run-id', 'killed-web'], { cwd: root, env: { TOOLCHAIN_STORE: STORE } });
    await held.runId;
    await new Promise((r) => setTimeout(r, 600));
    held.kill9();
    held.release();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${serve.url}/`);
    await page.locator('tr[data-run="killed-web"][data-interrupted="true"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('tr[data-run="killed-web"] .badge').textContent()).toContain('interrupted');
    await page.goto(`${serve.url}/#/runs/killed-web`);
    await page.locator('section.run[data-interrupted="true"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('.run-head .badge').textContent()).toContain('interrupted');
    expect(await page.locator('.notice.interrupted').textContent()).toContain('toolchain resume killed-web');
    // The graph is laid out after the page's first paint: wait for it, then count.
    await page.locator('g.node[data-status="interrupted"]').first().waitFor({ timeout: 10_000 });
    expect(await page.locator('g.node[data-status="interrupted"]').count()).toBe(1);
    expect(await page.locator('.gantt-row .bar.interrupted').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Cancel' }).isDisabled()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'serve-cli-interrupted.png') });
    const resume = page.getByRole('button', { name: 'Resume' });
    expect(await resume.isDisabled()).toBe(false);
    await resume.click();
    await page.locator('section.run[data-status="succeeded"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('section.run').getAttribute('data-interrupted')).toBeNull();
    await page.close();
  }, 60_000);

  it('after a resume over HTTP, the API, the CLI and the page tell one history', async () => {
    const gate = join(root, 'gate-open');
    const post = (path: string, body?: unknown): Promise<Response> =>
      fetch(`${serve.url}${path}`, { method: 'POST', ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
    const failed = (await (await post('/api/runs?wait=true', { chain: 'gated', input: { gate }, run_id: 'redrive-1' })).json()) as { status: string };
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'GATE' } });
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(gate, '');
    expect((await post('/api/runs/redrive-1/resume')).status).toBe(202);
    type Detail = { status: string; started_at: number; duration_ms: number; resumes: number[]; steps: Record<string, { status: string; attempts: number; timeline?: { status: string }[]; earlier?: unknown[] }> };
    let api: Detail;
    for (;;) {
      api = (await (await fetch(`${serve.url}/api/runs/redrive-1`)).json()) as Detail;
      if (api.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(api.status).toBe('succeeded');
    const shown = await runCli([...DIRS, 'runs', 'show', 'redrive-1', '--json'], { cwd: root, env: { TOOLCHAIN_STORE: STORE } });
    const cli = JSON.parse(shown.stdout) as Detail;
    // One vocabulary, one first start, one resume, every attempt of the step that ran again.
    expect(cli).not.toHaveProperty('created_at');
    expect(cli.started_at).toBe(api.started_at);
    expect(api.resumes).toHaveLength(1);
    expect(cli.resumes).toHaveLength(1);
    expect(api.resumes[0]!).toBeGreaterThan(api.started_at);
    for (const d of [api, cli]) {
      expect(d.duration_ms).toBeGreaterThan(d.resumes[0]! - d.started_at);
      expect(d.steps.b).toMatchObject({ status: 'succeeded', attempts: 2 });
      expect(d.steps.a).toMatchObject({ status: 'succeeded', attempts: 1 });
    }
    expect(api.steps.b!.timeline!.map((a) => a.status)).toEqual(['failed', 'succeeded']);
    expect(cli.steps.b!.earlier).toEqual([expect.objectContaining({ status: 'failed', attempts: 1, error: expect.objectContaining({ code: 'GATE' }) })]);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${serve.url}/#/runs/redrive-1`);
    await page.locator('section.run[data-status="succeeded"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('.gantt-row[data-step="b"] .bar').evaluateAll((bars) => bars.map((b) => b.className))).toEqual(['bar failed', 'bar succeeded']);
    expect(await page.locator('.gantt-row[data-step="b"] .resume-mark').count()).toBe(1);
    // On one time axis: the failed attempt, then the resume, then the attempt that succeeded.
    const lefts = await page.locator('.gantt-row[data-step="b"] .bar, .gantt-row[data-step="b"] .resume-mark').evaluateAll((spans) => spans.map((e) => [e.className, e.getBoundingClientRect().left] as const));
    const x = Object.fromEntries(lefts);
    expect(x['bar failed']!).toBeLessThan(x['resume-mark']!);
    expect(x['resume-mark']!).toBeLessThanOrEqual(x['bar succeeded']!);
    await page.screenshot({ path: join(ARTIFACTS, 'serve-cli-resumed.png') });
    await page.close();
    // A server started again reads the same history from the store.
    const again = await startServe({ cwd: root, globals: DIRS, args: ['--no-watch'], env: { TOOLCHAIN_STORE: STORE } });
    try {
      const stored = (await (await fetch(`${again.url}/api/runs/redrive-1`)).json()) as Detail;
      expect(stored).toMatchObject({ started_at: api.started_at, resumes: cli.resumes });
      expect(stored.steps.b).toMatchObject({ status: 'succeeded', attempts: 2 });
      expect(stored.steps.b!.timeline!.map((a) => a.status)).toEqual(['failed', 'succeeded']);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('puts for_each elements on the timeline under their step, ends long names with an ellipsis, and labels each tick once', async () => {
    const ran = (await (await fetch(`${serve.url}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: 'long_and_many' }) })).json()) as { run_id: string; status: string };
    expect(ran.status).toBe('succeeded');
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${serve.url}/#/runs/${ran.run_id}`);
    await page.locator('section.run[data-status="succeeded"]').waitFor({ timeout: 10_000 });
    const rows = await page.locator('.gantt-rows .gantt-row').evaluateAll((r) => r.map((e) => e.getAttribute('data-step')));
    expect(rows.slice(1)).toEqual(['each', 'each[0]', 'each[1]', 'each[2]']);
    expect(await page.locator('.gantt-row[data-step="each[1]"] .bar.succeeded').count()).toBe(1);
    const label = page.locator('.gantt-row[data-step^="a_step_whose"] button');
    const clipped = await label.evaluate((b) => ({ overflow: (globalThis as unknown as { getComputedStyle(e: unknown): { textOverflow: string } }).getComputedStyle(b).textOverflow, clipped: b.scrollWidth > b.clientWidth }));
    expect(clipped).toEqual({ overflow: 'ellipsis', clipped: true });
    const ticks = await page.locator('.gantt-axis .tick').allTextContents();
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ticks).size).toBe(ticks.length);
    await page.screenshot({ path: join(ARTIFACTS, 'serve-cli-elements.png') });
    await page.close();
  }, 60_000);
});
