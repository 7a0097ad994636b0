// Benchmarks of `toolchain serve`, observability and the inspector:
// - POST /api/runs?wait=true of a 3-step no-op chain, 16 connections (autocannon), the server in
//   its own process: target ≥ 3,000 req/s; overhead per request over engine.run() in this process.
// - Metrics + logs (info level, to a file) on every event: per-step overhead over the same runs
//   with an empty listener; target ≤ 1.5 µs.
// - The inspector: first paint of a 200-step run in headless Chromium (target ≤ 1 s), bundle size.

import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { createEngine, type Engine } from '../src/engine/engine.js';
import type { RunEvent } from '../src/run-model/events.js';
import { createBatchedDestination, createObserver } from '../src/observe/index.js';
import { createServer } from '../src/serve/index.js';
import { median, runIfMain, verdict, type BenchResult } from './harness.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const REPO = join(HERE, '..', '..');
const THREE = 'name: three_noop\nsteps:\n  - { name: a, tool: noop }\n  - { name: b, tool: noop }\n  - { name: c, tool: noop }\n';

function linearChain(name: string, steps: number, parallelEvery = 0): string {
  const lines = [`name: ${name}`, 'steps:'];
  for (let i = 0; i < steps; i++) {
    // With parallelEvery, steps fan out in groups so the DAG is wide as well as deep.
    const parallel = parallelEvery > 0 && i % parallelEvery !== 0 ? `, parallel: true, depends_on: [s${i - (i % parallelEvery)}]` : '';
    lines.push(`  - { name: s${i}, tool: noop${parallel} }`);
  }
  return `${lines.join('\n')}\n`;
}

async function noopEngine(...chains: string[]): Promise<Engine> {
  const engine = await createEngine();
  engine.registerTool({ name: 'noop', handler: () => ({}) });
  for (const c of chains) engine.addChain(c);
  return engine;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** µs per run; every 20 runs the event loop gets a turn (log writes, timers), as a server's would. */
async function usPerRun(fn: () => Promise<unknown>, runs: number): Promise<number> {
  for (let i = 0; i < runs / 5; i++) await fn();
  const t = performance.now();
  for (let i = 0; i < runs; i++) {
    await fn();
    if (i % 20 === 19) await turn();
  }
  return ((performance.now() - t) * 1000) / runs;
}

/** Reads an SSE stream to its end; resolves with the number of events and when the last came. */
async function followEvents(url: string): Promise<{ events: number; at: number }> {
  const res = await fetch(url);
  let events = 0;
  let tail = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const text = tail + Buffer.from(chunk).toString('utf8');
    events += text.split('\nevent: ').length - 1;
    tail = text.slice(-16);
  }
  return { events, at: performance.now() };
}

async function httpThroughput(lines: string[]): Promise<void> {
  const engine = await noopEngine(THREE);
  const engineUs = median([await usPerRun(() => engine.run('three_noop', {}), 5000), await usPerRun(() => engine.run('three_noop', {}), 5000), await usPerRun(() => engine.run('three_noop', {}), 5000)]);
  await engine.close();
  const { child, url, output } = await startTarget('memory:');
  const load = (options: { duration?: number; amount?: number }) => postRuns(url, options);
  await load({ duration: 3 }); // warm-up: JIT, and the service fills up to its 1,000 kept runs
  const r = await load({ duration: 8 });
  const reqPerSec = r.requests.total / (r.duration || 8);
  const overheadUs = 1e6 / reqPerSec - engineUs;
  lines.push(`POST /api/runs?wait=true, 3-step no-op chain, 16 connections: ${Math.round(reqPerSec)} req/s (target ≥ 3,000: ${verdict(reqPerSec >= 3000)}), latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, errors ${r.errors + r.non2xx}`);
  lines.push(`  engine.run() of the same chain in-process: ${engineUs.toFixed(1)} µs; HTTP + service + metrics overhead ≈ ${overheadUs.toFixed(0)} µs of server time per request`);
  const thousand = await load({ amount: 1000 });
  lines.push(`  exactly 1,000 requests, 16 at a time: p50 ${thousand.latency.p50} ms, p99 ${thousand.latency.p99} ms, errors ${thousand.errors + thousand.non2xx}`);

  // 200 SSE clients on one run: 1 s of waiting, then 50 steps of events to every client.
  const started = (await (await fetch(`${url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chain":"fan_out"}' })).json()) as { run_id: string };
  const clients = await Promise.all(Array.from({ length: 200 }, () => followEvents(`${url}/api/runs/${started.run_id}/events`)));
  const first = Math.min(...clients.map((c) => c.at));
  const last = Math.max(...clients.map((c) => c.at));
  const complete = clients.every((c) => c.events === clients[0]!.events);
  lines.push(`200 SSE clients on one run (${clients[0]!.events} events each): all complete ${complete ? 'yes' : 'NO'}, the last finished ${(last - first).toFixed(0)} ms after the first`);

  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  const rss = /rss (\d+) (\d+)/.exec(output.join(''));
  if (rss) lines.push(`  server process after all of the above: RSS ${(Number(rss[1]) / 1048576).toFixed(0)} MB, peak ${(Number(rss[2]) / 1048576).toFixed(0)} MB (in-memory service keeping 1,000 runs)`);

  // The same with every run recorded in SQLite (synchronous NORMAL), as `toolchain serve` does by default.
  const dir = mkdtempSync(join(tmpdir(), 'tc-bench-serve-'));
  const sqlite = await startTarget(`sqlite:${join(dir, 'runs.db')}`);
  await postRuns(sqlite.url, { duration: 2 });
  const s = await postRuns(sqlite.url, { duration: 5 });
  lines.push(`  with the SQLite store: ${Math.round(s.requests.total / (s.duration || 5))} req/s, latency p50 ${s.latency.p50} ms, p99 ${s.latency.p99} ms, errors ${s.errors + s.non2xx}`);
  sqlite.child.kill('SIGTERM');
  await new Promise((resolve) => sqlite.child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}

/** The server of serve-target.ts in its own process, recording runs in `store`. */
async function startTarget(store: string): Promise<{ child: ReturnType<typeof spawn>; url: string; output: string[] }> {
  const child = spawn(process.execPath, [join(HERE, 'serve-target.js'), store], { stdio: ['ignore', 'pipe', 'inherit'] });
  const output: string[] = [];
  child.stdout!.on('data', (d: Buffer) => output.push(d.toString()));
  const url = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { child, url, output };
}

function postRuns(url: string, options: { duration?: number; amount?: number }): Promise<autocannon.Result> {
  return autocannon({ url: `${url}/api/runs?wait=true`, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chain":"three_noop"}', connections: 16, ...options });
}

async function observeOverhead(lines: string[]): Promise<void> {
  const steps = 100;
  const engine = await noopEngine(linearChain('linear100', steps));
  const dir = mkdtempSync(join(tmpdir(), 'tc-bench-logs-'));
  const fd = openSync(join(dir, 'run.log'), 'w');
  const destination = createBatchedDestination((chunk) => writeSync(fd, chunk));
  const observer = createObserver(engine, { logger: pino({ level: 'info' }, destination), traces: false });
  const metricsOnly = createObserver(engine, { logs: false, traces: false });
  let seen = 0;
  const empty = (_e: RunEvent): void => void seen++;
  const withEmpty: number[] = [];
  const withObserver: number[] = [];
  const withMetrics: number[] = [];
  for (let round = 0; round < 5; round++) {
    withEmpty.push(await usPerRun(() => engine.run('linear100', {}, { onEvent: empty }), 1000));
    withObserver.push(await usPerRun(() => engine.run('linear100', {}, { onEvent: observer.onEvent }), 1000));
    withMetrics.push(await usPerRun(() => engine.run('linear100', {}, { onEvent: metricsOnly.onEvent }), 1000));
  }
  destination.flush();
  closeSync(fd);
  const perStep = (median(withObserver) - median(withEmpty)) / steps;
  const bytes = statSync(join(dir, 'run.log')).size;
  lines.push(`metrics + logs (info, to a file) per step: ${perStep.toFixed(2)} µs over an empty listener (target ≤ 1.5 µs: ${verdict(perStep <= 1.5)}); run of 100 steps ${median(withEmpty).toFixed(0)} → ${median(withObserver).toFixed(0)} µs; ${(bytes / 1024 / 1024).toFixed(1)} MB of log lines`);
  lines.push(`  of which metrics alone: ${((median(withMetrics) - median(withEmpty)) / steps).toFixed(2)} µs per step`);
  rmSync(dir, { recursive: true, force: true });
  await engine.close();
}

async function inspectorPaint(lines: string[]): Promise<void> {
  const web = join(REPO, 'dist', 'web');
  const assets = readdirSync(join(web, 'assets'));
  const size = (ext: string): [number, number] => {
    const files = assets.filter((f) => f.endsWith(ext)).map((f) => readFileSync(join(web, 'assets', f)));
    return [files.reduce((n, b) => n + b.length, 0), files.reduce((n, b) => n + gzipSync(b).length, 0)];
  };
  const [js, jsGz] = size('.js');
  const [css, cssGz] = size('.css');
  lines.push(`inspector bundle: JS ${(js / 1024).toFixed(1)} kB (${(jsGz / 1024).toFixed(1)} kB gzip), CSS ${(css / 1024).toFixed(1)} kB (${(cssGz / 1024).toFixed(1)} kB gzip)`);
  let chromium: typeof import('playwright-core').chromium;
  try {
    ({ chromium } = await import('playwright-core'));
    if (!existsSync(CHROMIUM)) throw new Error(`no ${CHROMIUM}`);
  } catch (error) {
    lines.push(`inspector first paint: skipped (${(error as Error).message}; apt-get install -y chromium)`);
    return;
  }
  const engine = await noopEngine(linearChain('wide200', 200, 8));
  const server = await createServer(engine, { webRoot: web });
  const base = await server.listen({ port: 0 });
  const { run_id } = (await server.service.start('wide200', {}, { wait: true }));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    // bypassCSP: the inspector's CSP (script-src 'self') forbids the string predicates below;
    // it does not change how the page itself loads or draws.
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    await page.goto(`${base}/#/runs/${run_id}`);
    // (Page code as strings: this file is type-checked without the DOM library.)
    await page.waitForFunction(`document.querySelectorAll('g.node[data-status="succeeded"]').length === 200 && document.querySelectorAll('.gantt-row[data-step]').length === 200`);
    // Time from the start of navigation to a frame with the whole run drawn.
    times.push(await page.evaluate<number>('new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())))'));
    await page.close();
  }
  await browser.close();
  await server.close(0);
  await engine.close();
  const ms = median(times);
  lines.push(`inspector first paint of a 200-step run (DAG and timeline drawn), headless Chromium, median of 5: ${ms.toFixed(0)} ms (target ≤ 1,000 ms: ${verdict(ms <= 1000)})`);
}

export async function benchServe(): Promise<BenchResult> {
  const lines: string[] = [];
  await httpThroughput(lines);
  await observeOverhead(lines);
  await inspectorPaint(lines);
  return { name: 'serve: HTTP API, metrics and logs, inspector', lines };
}

await runIfMain(import.meta.url, benchServe);
