import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from '../helpers/browser.js';
import { REPO } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// A polling run started over HTTP on `node bin/toolchain.js serve`: the server's waker takes it
// through its sleeps, and the API and the run page show each round (`probe#N`), in real headless
// Chromium.

const FIXTURE = join(REPO, 'test', 'fixtures', 'repeat');
const root = mkdtempSync(join(tmpdir(), 'toolchain-browser-repeat-'));
let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  serve = await startServe({
    cwd: root,
    globals: ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')],
    args: ['--no-watch', '--no-recover'],
    env: { TOOLCHAIN_STORE: `sqlite:${join(root, 'runs.db')}`, PROBE_LOG: join(root, 'probe.log') },
  });
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('a repeat step in the inspector', () => {
  it('shows each round as a row under its step, and lists the rounds in the step panel', async () => {
    const res = await fetch(`${serve.url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: 'poll' }) });
    const { run_id } = (await res.json()) as { run_id: string };
    type Detail = { status: string; outputs: unknown; steps: Record<string, { status: string; output?: unknown }> };
    let detail: Detail;
    for (let i = 0; ; i++) {
      detail = (await (await fetch(`${serve.url}/api/runs/${run_id}`)).json()) as Detail;
      if (detail.status === 'succeeded' || detail.status === 'failed' || i > 300) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(detail).toMatchObject({ status: 'succeeded', outputs: { n: 4 } });
    expect([1, 2, 3, 4].map((k) => detail.steps[`probe#${k}`])).toEqual([1, 2, 3, 4].map((n) => expect.objectContaining({ status: 'succeeded', output: { n } })));

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${serve.url}/#/runs/${run_id}`);
    await page.locator('section.run[data-status="succeeded"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('.gantt-row.element').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-step')))).toEqual(['probe#1', 'probe#2', 'probe#3', 'probe#4']);
    await page.locator('.gantt-row[data-step="probe"] button').click();
    await page.locator('.step-detail table.rounds').waitFor();
    expect(await page.locator('.step-detail table.rounds tbody tr').count()).toBe(4);
    expect(await page.locator('.step-detail table.rounds tbody tr').last().textContent()).toContain('{"n":4}');
    await page.screenshot({ path: join(ARTIFACTS, 'repeat-rounds.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
