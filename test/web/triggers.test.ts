import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from '../helpers/browser.js';
import { runCli } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// The Triggers page as a person uses it, in Debian's Chromium: `toolchain serve` from bin/ fires an
// `every: 1s` trigger on a SQLite store; the page, reached from the navigation, lists the chain's
// triggers with their kind, schedule or interval, zone, next runs and last run (a link to its run
// page). Pause (with a reason) stops the trigger — no new run while it is paused — a pause made
// by the CLI in another process shows up without a reload, and Resume starts it again.

const root = mkdtempSync(join(tmpdir(), 'toolchain-browser-triggers-'));
const STORE = `sqlite:${join(root, 'runs.db')}`;
const env = { TOOLCHAIN_CACHE_DIR: join(root, 'cache') };
let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(join(root, 'chains'));
  mkdirSync(join(root, 'plugins'));
  writeFileSync(join(root, 'chains', 'nightly.yaml'), 'name: nightly\ntriggers:\n  - every: 1s\n    id: sec\n    overlap: allow\n  - schedule: "0 6 * * 1-5"\n    timezone: Europe/Paris\nsteps:\n  - name: nap\n    sleep: 1ms\n');
  writeFileSync(join(root, 'chains', 'plain.yaml'), 'name: plain\nsteps:\n  - name: nap\n    sleep: 1ms\n');
  serve = await startServe({ cwd: root, args: ['--no-watch', '--store', STORE], env });
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  rmSync(root, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('triggers in the inspector', () => {
  it('lists a chain’s triggers, pauses one with a reason, shows a pause made by the CLI, and resumes', async () => {
    const errors: string[] = [];
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${serve.url}/`);
    await page.getByRole('link', { name: 'Triggers' }).click();
    const sec = page.locator('tr[data-trigger="nightly#sec"]');
    const morning = page.locator('tr[data-trigger="nightly#2"]');
    await sec.locator('td.last a').waitFor({ timeout: 15_000 });
    expect(await sec.getAttribute('data-state')).toBe('active');
    expect(await sec.locator('td').nth(1).textContent()).toContain('every 1 s');
    expect(await sec.locator('ol.next-runs li').count()).toBe(3);
    expect(await morning.locator('td').nth(1).textContent()).toContain('cron 0 6 * * 1-5');
    expect(await morning.locator('td').nth(1).textContent()).toContain('Europe/Paris');
    expect(await morning.locator('ol.next-runs li').count()).toBe(3);
    expect(await morning.locator('td.last').textContent()).toContain('never ran');
    // A chain without triggers has no section.
    expect(await page.locator('section.trigger-chain[data-chain="plain"]').count()).toBe(0);

    // The last run is a link to its page.
    const lastRun = (await sec.locator('td.last a').textContent())!;
    expect(lastRun).toMatch(/^nightly#sec@\d{8}T\d{6}Z$/);
    await sec.locator('td.last a').click();
    await page.locator('section.run').waitFor({ timeout: 10_000 });
    expect(decodeURIComponent(page.url())).toContain(`#/runs/${lastRun}`);
    await page.goBack();

    // Pause, with a reason: the row says who paused it (the server's name for the caller) and why.
    await sec.getByPlaceholder('Reason (optional)').fill('database migration');
    await sec.getByRole('button', { name: 'Pause' }).click();
    await page.locator('.notice.info').filter({ hasText: 'Paused nightly#sec (by local)' }).waitFor({ timeout: 10_000 });
    await page.locator('tr[data-trigger="nightly#sec"][data-state="paused"]').waitFor({ timeout: 10_000 });
    expect(await sec.locator('td.state').textContent()).toContain('by local');
    expect(await sec.locator('td.state .reason').textContent()).toBe('database migration');
    expect(await sec.locator('td.next').textContent()).toContain('none while paused');
    await page.screenshot({ path: join(ARTIFACTS, 'inspector-triggers-paused.png') });

    // No new run while it is paused (the page polls: its last run stays what it was once the pause was seen).
    await sleep(1_000);
    const lastWhilePaused = await sec.locator('td.last a').textContent();
    await sleep(2_500);
    expect(await sec.locator('td.last a').textContent()).toBe(lastWhilePaused);

    // A pause made by another process (the CLI on the same store) shows up without a reload.
    const cli = await runCli(['triggers', 'pause', 'nightly#2', '--by', 'ada', '--store', STORE], { cwd: root, env });
    expect(cli.code, cli.stderr).toBe(0);
    await page.locator('tr[data-trigger="nightly#2"][data-state="paused"]').waitFor({ timeout: 10_000 });
    expect(await morning.locator('td.state').textContent()).toContain('by ada');

    // Resume: active again, and runs start again.
    await sec.getByRole('button', { name: 'Resume' }).click();
    await page.locator('tr[data-trigger="nightly#sec"][data-state="active"]').waitFor({ timeout: 10_000 });
    expect(await sec.locator('ol.next-runs li').count()).toBe(3);
    await expect.poll(() => sec.locator('td.last a').textContent(), { timeout: 10_000, interval: 200 }).not.toBe(lastWhilePaused);
    await page.screenshot({ path: join(ARTIFACTS, 'inspector-triggers.png') });

    // One chain's triggers, from its heading.
    await page.locator('section.trigger-chain[data-chain="nightly"] h2 a', { hasText: 'nightly' }).click();
    await page.locator('h1', { hasText: 'Triggers of nightly' }).waitFor({ timeout: 10_000 });
    await page.locator('section.trigger-chain[data-chain="nightly"] tr[data-trigger="nightly#sec"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('section.trigger-chain').count()).toBe(1);
    await page.goto(`${serve.url}/#/triggers/plain`);
    await page.locator('.empty', { hasText: 'declares no triggers' }).waitFor({ timeout: 10_000 });
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);
});
