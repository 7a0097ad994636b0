import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from '../helpers/browser.js';
import { REPO } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// A dangerous tool's call in a run started over HTTP, as a person meets it: `toolchain serve`
// from bin/ (no --approve) parks the run on an approval request; the run page shows it waiting,
// the Approvals page lists the request with its tool and arguments, Approve is clicked there, and
// the run page left open in another tab sees the run go on and finish with the tool's output.

const FIXTURE = join(REPO, 'test', 'fixtures', 'serve', 'waits');
const DIRS = ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')];
const root = mkdtempSync(join(tmpdir(), 'toolchain-browser-approvals-'));
let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  serve = await startServe({ cwd: root, globals: DIRS, args: ['--no-watch', '--no-recover'], env: { TOOLCHAIN_STORE: `sqlite:${join(root, 'runs.db')}` } });
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  rmSync(root, { recursive: true, force: true });
});

async function startRun(chain: string, input: unknown, runId: string): Promise<void> {
  const res = await fetch(`${serve.url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain, input, run_id: runId }) });
  expect(res.status).toBe(202);
}

describe('approvals in the inspector', () => {
  it('parks a dangerous call, approves it on the Approvals page, and the open run page sees the run finish', async () => {
    await startRun('vault', { door: 'north-door' }, 'vault-web');
    const errors: string[] = [];
    const runPage = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    runPage.on('pageerror', (e) => errors.push(e.message));
    await runPage.goto(`${serve.url}/#/runs/vault-web`);
    await runPage.locator('section.run[data-status="waiting"]').waitFor({ timeout: 10_000 });
    expect(await runPage.locator('.run-head .badge').textContent()).toContain('waiting');
    expect(await runPage.locator('.notice.waiting').textContent()).toContain('approval');
    await runPage.locator('g.node[data-status="waiting"]').waitFor({ timeout: 10_000 });
    // The run's own page offers the decision too.
    await runPage.locator('.approvals-panel article.approval').waitFor({ timeout: 10_000 });
    await runPage.screenshot({ path: join(ARTIFACTS, 'inspector-waiting-run.png') });

    // The runs list says what it waits for.
    const list = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    list.on('pageerror', (e) => errors.push(e.message));
    await list.goto(`${serve.url}/`);
    await list.locator('tr[data-run="vault-web"][data-status="waiting"] .waiting-for').waitFor({ timeout: 10_000 });
    expect(await list.locator('tr[data-run="vault-web"] .badge').textContent()).toContain('waiting');

    // The Approvals page, reached from the navigation.
    await list.getByRole('link', { name: 'Approvals' }).click();
    const card = list.locator('article.approval[data-run="vault-web"]');
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator('h3').textContent()).toContain('vault/open_vault');
    expect(await card.locator('pre.args').textContent()).toContain('"door": "north-door"');
    expect(await card.locator('.prompt').textContent()).toContain("dangerous tool 'vault/open_vault'");
    expect(await card.locator('a[href="#/runs/vault-web"]').count()).toBe(1);
    await list.screenshot({ path: join(ARTIFACTS, 'inspector-approvals.png') });
    await card.getByPlaceholder('Comment (optional)').fill('north door is fine');
    await card.getByRole('button', { name: 'Approve' }).click();
    await list.locator('.notice.info').filter({ hasText: 'Approved' }).waitFor({ timeout: 10_000 });
    expect(await list.locator('.notice.info').textContent()).toContain('by local');
    await card.waitFor({ state: 'detached', timeout: 10_000 });

    // The run page, left open, follows the woken run to its end.
    await runPage.locator('section.run[data-status="succeeded"]').waitFor({ timeout: 15_000 });
    expect(await runPage.locator('.detail-panel').textContent()).toContain('north-door');
    await runPage.locator('g.node[data-status="succeeded"]').waitFor({ timeout: 10_000 });
    await runPage.locator('g.node').first().click();
    expect(await runPage.locator('.detail-panel').textContent()).toContain('the vault tool');
    await runPage.screenshot({ path: join(ARTIFACTS, 'inspector-approved-run.png') });
    expect(await runPage.locator('.approvals-panel').count()).toBe(0);

    const decided = (await (await fetch(`${serve.url}/api/runs/vault-web`)).json()) as { status: string; outputs: unknown };
    expect(decided).toMatchObject({ status: 'succeeded', outputs: { opened: 'north-door' } });
    expect(errors).toEqual([]);
    await list.close();
    await runPage.close();
  }, 60_000);

  it('denies a request from the run page: the run fails with APPROVAL_DENIED', async () => {
    await startRun('vault', { door: 'cellar' }, 'vault-deny');
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${serve.url}/#/runs/vault-deny`);
    const card = page.locator('.approvals-panel article.approval');
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator('pre.args').textContent()).toContain('cellar');
    await card.getByRole('button', { name: 'Deny' }).click();
    await page.locator('section.run[data-status="failed"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('.run-error').textContent()).toContain('APPROVAL_DENIED');
    await page.close();
  }, 60_000);
});
