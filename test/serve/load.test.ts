import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { createServer, type ToolchainServer } from '../../src/serve/index.js';
import { serveEngine } from '../helpers/serve-engine.js';
import { readSse } from '../helpers/sse-client.js';

// Load on loopback with generous bounds (the numbers themselves are in `npm run bench`): 200 SSE
// clients on one run, and 1,000 POST /api/runs?wait=true with 16 in flight. Every request must
// succeed and memory must stay bounded; p99 latency is printed.

let engine: Engine;
let server: ToolchainServer;
let base: string;

beforeAll(async () => {
  engine = await serveEngine();
  server = await createServer(engine, { maxRuns: 200 });
  base = await server.listen({ port: 0 });
});
afterAll(async () => {
  await server.close(0);
  await engine.close();
});

const mb = (bytes: number): number => Math.round(bytes / 1024 / 1024);

describe('load', () => {
  it('200 SSE clients on one run all get every event, in order', async () => {
    const start = await fetch(`${base}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: 'slow', input: { ms: 1500 } }) });
    const { run_id } = (await start.json()) as { run_id: string };
    let connected = 0;
    const clients = Array.from({ length: 200 }, () => {
      let first = true;
      return readSse(`${base}/api/runs/${run_id}/events`, {}, () => {
        if (first) connected++;
        first = false;
      });
    });
    const results = await Promise.all(clients);
    expect(connected).toBe(200);
    const expected = results[0]!.map((m) => m.event);
    expect(expected).toEqual(['run:started', 'step:started', 'step:succeeded', 'step:started', 'step:succeeded', 'run:finished']);
    for (const r of results) expect(r).toEqual(results[0]);
  });

  it('1,000 POST /api/runs?wait=true, 16 at a time: no error, bounded memory', async () => {
    const total = 1000;
    const concurrency = 16;
    const latencies: number[] = [];
    const statuses = new Map<string, number>();
    const rssBefore = process.memoryUsage().rss;
    let next = 0;
    const started = performance.now();
    const worker = async (): Promise<void> => {
      while (next < total) {
        next++;
        const t = performance.now();
        const res = await fetch(`${base}/api/runs?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chain":"three_noop"}' });
        const body = (await res.json()) as { status?: string };
        latencies.push(performance.now() - t);
        const key = `${res.status} ${body.status ?? ''}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - started) / 1000;
    const sorted = latencies.sort((a, b) => a - b);
    const p = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    const rssAfter = process.memoryUsage().rss;
    console.log(`serve load: ${total} requests, ${concurrency} at a time: ${Math.round(total / seconds)} req/s, p50 ${p(0.5).toFixed(2)} ms, p99 ${p(0.99).toFixed(2)} ms; RSS ${mb(rssBefore)} → ${mb(rssAfter)} MB`);
    expect([...statuses]).toEqual([['200 succeeded', total]]);
    expect(p(0.99)).toBeLessThan(2000);
    expect(rssAfter - rssBefore).toBeLessThan(200 * 1024 * 1024);
    // Nothing keeps every run: the engine's memory store the newest 100, the service's views its maxRuns.
    const listed = (await (await fetch(`${base}/api/runs?limit=1000`)).json()) as { runs: unknown[] };
    expect(listed.runs.length).toBe(100);
  });
});
