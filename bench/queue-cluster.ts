// Processes for bench/queue.ts: a private redis-server on a free port (no persistence) and
// `toolchain worker` child processes over a folder of bench chains and a no-op/sleep plugin.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(REPO, 'bin', 'toolchain.js');

export interface Cluster {
  readonly url: string;
  readonly dir: string;
  startWorkers(n: number, args: readonly string[]): Promise<ChildProcess[]>;
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

const step = (name: string, input: string): string => `  - { name: ${name}, tool: ${input} }\n`;

/** Chains `noop5` (five no-op steps) and `sleep5` (five steps of 50 ms), and `mark5` (each step logs its start to $MARK_LOG, then sleeps 1 s). */
function writeProject(dir: string): void {
  mkdirSync(join(dir, 'chains'));
  mkdirSync(join(dir, 'plugins', 'b', 'tools'), { recursive: true });
  const chain = (name: string, call: string): string => `name: ${name}\nsteps:\n${[1, 2, 3, 4, 5].map((i) => step(`s${i}`, call)).join('')}`;
  writeFileSync(join(dir, 'chains', 'noop5.yaml'), chain('noop5', 'noop'));
  writeFileSync(join(dir, 'chains', 'sleep5.yaml'), chain('sleep5', 'nap, input_map: { ms: 50 }'));
  writeFileSync(join(dir, 'chains', 'mark5.yaml'), chain('mark5', 'nap, input_map: { ms: 1000, mark: true }'));
  writeFileSync(
    join(dir, 'plugins', 'b', 'plugin.yaml'),
    `name: b\nversion: 1.0.0\nenv: [MARK_LOG]\ntools:\n  - { name: noop, description: nothing, parameters: { type: object }, handler: tools/b.js#noop }\n  - name: nap\n    description: sleeps\n    parameters: { type: object, properties: { ms: { type: integer }, mark: { type: boolean } } }\n    handler: tools/b.js#nap\n`,
  );
  writeFileSync(
    join(dir, 'plugins', 'b', 'tools', 'b.js'),
    `import { appendFileSync } from 'node:fs';\nexport function noop() { return {}; }\nexport async function nap({ ms, mark }, ctx) {\n  if (mark) appendFileSync(ctx.env.MARK_LOG, JSON.stringify({ key: ctx.idempotencyKey, pid: process.pid, t0: Date.now() }) + '\\n');\n  await new Promise((r) => setTimeout(r, ms));\n  return {};\n}\n`,
  );
}

export async function startCluster(): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'toolchain-bench-queue-'));
  writeProject(dir);
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  await new Promise((r) => setTimeout(r, 300));
  let workers: ChildProcess[] = [];
  const stopWorkers = async (): Promise<void> => {
    await Promise.all(workers.map((w) => (w.exitCode !== null || w.signalCode !== null ? undefined : new Promise((r) => (w.once('exit', r), w.kill('SIGKILL'))))));
    workers = [];
  };
  return {
    url,
    dir,
    async startWorkers(n, args) {
      const started = Array.from({ length: n }, () =>
        spawn(process.execPath, [BIN, '--chains', join(dir, 'chains'), '--plugins', join(dir, 'plugins'), 'worker', '--queue', url, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MARK_LOG: join(dir, 'mark.log') } }),
      );
      await Promise.all(
        started.map(
          (w) =>
            new Promise<void>((resolve, reject) => {
              let err = '';
              w.stderr!.on('data', (d: Buffer) => ((err += d.toString()), err.includes('ready:') && resolve()));
              w.once('exit', (code) => reject(new Error(`a worker exited with ${code} before it was ready: ${err}`)));
            }),
        ),
      );
      workers.push(...started);
      return started;
    },
    stopWorkers,
    async close() {
      await stopWorkers();
      redis.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
