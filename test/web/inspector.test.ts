import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { createServer, type ToolchainServer } from '../../src/serve/index.js';
import { ARTIFACTS, launchChromium } from '../helpers/browser.js';
import { serveEngine } from '../helpers/serve-engine.js';

// The run inspector in real headless Chromium against a real listening server: live status over
// SSE without reloading, a failed run's error, starting a run from the form, cancelling one.
// Screenshots go to test/artifacts/.

let engine: Engine;
let server: ToolchainServer;
let base: string;
let browser: Browser;

beforeAll(async () => {
  engine = await serveEngine();
  server = await createServer(engine);
  base = `${await server.listen({ port: 0 })}/`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close(0);
  await engine?.close();
});

async function start(chain: string, input: unknown = {}, wait = false): Promise<string> {
  const res = await fetch(`${base}api/runs${wait ? '?wait=true' : ''}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain, input }) });
  return ((await res.json()) as { run_id: string }).run_id;
}

async function openPage(hash: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  (page as Page & { errors?: string[] }).errors = errors;
  await page.goto(`${base}${hash}`);
  return page;
}

const pageErrors = (page: Page): string[] => (page as Page & { errors?: string[] }).errors ?? [];

describe('run inspector', () => {
  it('shows a slow step turn from running to succeeded without a reload', async () => {
    // Long enough that a page opened on a loaded machine still sees the step running.
    const id = await start('slow', { ms: 5000 });
    const page = await openPage(`#/runs/${id}`);
    await page.evaluate(() => ((globalThis as { marker?: number }).marker = 42));
    await page.locator('g.node[data-step="wait"][data-status="running"]').waitFor({ timeout: 5000 });
    await page.locator('.bar.running').first().waitFor({ timeout: 5000 });
    await page.screenshot({ path: join(ARTIFACTS, 'run-running.png') });
    await page.locator('g.node[data-step="wait"][data-status="succeeded"]').waitFor({ timeout: 15_000 });
    await page.locator('g.node[data-step="after"][data-status="succeeded"]').waitFor();
    await page.locator('section.run[data-status="succeeded"]').waitFor();
    // The same document all along: no reload happened.
    expect(await page.evaluate(() => (globalThis as { marker?: number }).marker)).toBe(42);
    await page.locator('g.node[data-step="wait"]').click();
    await expect.poll(() => page.locator('.step-detail pre.json').first().textContent()).toContain('"ms": 5000');
    await page.screenshot({ path: join(ARTIFACTS, 'run-succeeded.png') });
    expect(pageErrors(page)).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows a failed run with its error, and a step chosen with the keyboard', async () => {
    const id = await start('failing', {}, true);
    const page = await openPage(`#/runs/${id}`);
    const banner = page.locator('.run-error');
    await banner.waitFor();
    expect(await banner.textContent()).toContain('BOOM');
    expect(await banner.textContent()).toContain('the tool exploded');
    expect(await page.locator('g.node[data-step="explode"]').getAttribute('data-status')).toBe('failed');
    expect(await page.locator('g.node[data-step="never"]').getAttribute('data-status')).toBe('pending');
    await page.locator('g.node[data-step="explode"]').focus({ timeout: 3000 });
    await page.keyboard.press('Enter');
    await page.locator('.step-detail[data-step="explode"] .step-error').waitFor({ timeout: 3000 });
    expect(await page.locator('.step-detail .step-error').textContent()).toContain('BOOM');
    await page.screenshot({ path: join(ARTIFACTS, 'run-failed.png') });
    await page.close();
  });

  it('shows retries and a fallback on the timeline', async () => {
    const id = await start('flaky', {}, true);
    const page = await openPage(`#/runs/${id}`);
    await page.locator('section.run[data-status="succeeded"]').waitFor();
    const shaky = page.locator('.gantt-row[data-step="shaky"] .bar');
    expect(await shaky.count()).toBe(3);
    expect(await page.locator('.gantt-row[data-step="shaky"] .bar.failed').count()).toBe(2);
    expect(await page.locator('.gantt-row[data-step="rescued"] .bar.fallback').count()).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, 'run-retries.png') });
    expect(pageErrors(page)).toEqual([]);
    await page.close();
  });

  it('starts a run from the form built from the input schema', async () => {
    const page = await openPage('#/start/form');
    await page.getByLabel(/^name/).fill('Ada');
    await page.getByLabel(/^times/).fill('3');
    await page.getByLabel(/^loud/).check();
    await page.getByLabel(/^language/).selectOption('fr');
    await page.screenshot({ path: join(ARTIFACTS, 'start-form.png') });
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/#\/runs\//);
    await page.locator('section.run[data-status="succeeded"]').waitFor();
    await expect.poll(() => page.locator('.detail-panel').textContent()).toContain('fr: hello Ada x3true');
    // Nothing the page does breaks its Content-Security-Policy (a violation is a console error).
    expect(pageErrors(page)).toEqual([]);
    await page.close();
  });

  it('reports the server refusing the form input', async () => {
    const page = await openPage('#/start/form');
    await page.getByLabel(/^name/).fill('Ada');
    await page.getByLabel(/^times/).fill('9');
    // The browser's own check (max 5) stops the submit first; drop it to see the server's answer.
    await page.locator('form.input-form').evaluate((f) => f.setAttribute('novalidate', ''));
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.locator('.input-form .notice.error').waitFor();
    expect(await page.locator('.input-form .notice.error').textContent()).toMatch(/times/);
    await page.close();
  });

  it('cancels a running run', async () => {
    const id = await start('slow', { ms: 20_000 });
    const page = await openPage(`#/runs/${id}`);
    await page.locator('g.node[data-step="wait"][data-status="running"]').waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('section.run[data-status="cancelled"]').waitFor({ timeout: 5000 });
    expect(await page.locator('g.node[data-step="wait"]').getAttribute('data-status')).toBe('failed');
    expect(await page.getByRole('button', { name: 'Cancel' }).isDisabled()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'run-cancelled.png') });
    // Resume takes the cancelled run up again from its recorded steps (none succeeded: `wait` runs again).
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('g.node[data-step="wait"][data-status="running"]').waitFor({ timeout: 5000 });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('section.run[data-status="cancelled"]').waitFor({ timeout: 5000 });
    await page.close();
  });

  it('lists runs, filters them, and shows new runs without a reload', async () => {
    const page = await openPage('#/');
    await page.locator('table.runs tbody tr').first().waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'runs-list.png') });
    await page.getByLabel('Status').selectOption('failed');
    await expect.poll(async () => [...new Set(await page.locator('table.runs tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status'))))]).toEqual(['failed']);
    await page.getByLabel('Status').selectOption('');
    const id = await start('three_noop', {}, true);
    await page.locator(`tr[data-run="${id}"]`).waitFor({ timeout: 5000 });
    expect(pageErrors(page)).toEqual([]);
    await page.close();
  });
});
