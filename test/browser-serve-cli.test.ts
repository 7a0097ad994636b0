import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from './helpers/browser.js';
import { REPO } from './helpers/run-cli.js';
import { startServe, type ServeProcess } from './helpers/serve-cli.js';

// The run inspector as a user gets it from a clone: `node bin/toolchain.js serve` (the built CLI
// bundle, not the sources), opened in real headless Chromium.

const FIXTURE = join(REPO, 'test', 'fixtures', 'durable');
const root = mkdtempSync(join(tmpdir(), 'toolchain-serve-cli-'));
let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  serve = await startServe({ cwd: root, globals: ['--chains', join(FIXTURE, 'chains'), '--plugins', join(FIXTURE, 'plugins')], args: ['--no-watch'], env: { TOOLCHAIN_STORE: `sqlite:${join(root, 'runs.db')}` } });
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
});
