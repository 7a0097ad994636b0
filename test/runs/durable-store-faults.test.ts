import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import type { RunDetail } from '../../src/runs/stored-result.js';
import { openStore, type RunStore } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { startPrivatePostgres, type PrivatePostgres } from '../fixtures/store/private-postgres.js';
import { NOBODY } from '../fixtures/store/spawn-child.js';
import { REPO, runCli, STACK_LINE } from '../helpers/run-cli.js';

// "Store faults", through the engine: a store that stops taking writes in the middle of
// a run fails that run with a STORE_* error, keeps every result it had recorded, and leaves the
// engine serving: once the store is back, other runs succeed and the failed one resumes from its
// records without running them again.

const CHAIN = `version: "1"
name: three
steps:
  - { name: first, tool: count }
  - { name: second, tool: fault, input_map: { after: $.first.n } }
  - { name: third, tool: count, input_map: { after: $.second.n } }
outputs: { n: $.third.n }
`;

interface Harness {
  engine: Engine;
  calls: Map<string, number>;
}

/** An engine on `store` whose `fault` tool calls `fault()` (after the first step is durable) before it answers. */
async function harness(store: RunStore | string, fault: () => Promise<void> | void): Promise<Harness> {
  const engine = await createEngine({ cache: 'off', store });
  const calls = new Map<string, number>();
  const counted = (step: string): number => {
    const n = (calls.get(step) ?? 0) + 1;
    calls.set(step, n);
    return n;
  };
  engine.registerTool({ name: 'count', parameters: { type: 'object' }, handler: (_args, ctx) => ({ n: counted(ctx.step) }) });
  engine.registerTool({
    name: 'fault',
    parameters: { type: 'object' },
    handler: async (_args, ctx) => {
      // The first step's result is written in an earlier turn of the event loop than this one's.
      await new Promise((r) => setTimeout(r, 30));
      await fault();
      return { n: counted(ctx.step), padding: 'x'.repeat(50_000) };
    },
  });
  engine.addChain(CHAIN);
  return { engine, calls };
}

/** The steps whose results the store holds. */
const recorded = (detail: RunDetail | undefined): string[] => Object.entries(detail?.steps ?? {}).filter(([, s]) => s.status === 'succeeded').map(([k]) => k);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolchain-faults-'));
});
afterEach(() => {
  chmodSync(dir, 0o755);
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite faults during a run', () => {
  it('a full disk fails the run with STORE_WRITE_FAILED; the engine serves on, and the run resumes from its records', async () => {
    const store = (await openStore(`sqlite:${join(dir, 'runs.db')}`)) as SqliteStore;
    const db = store.connection;
    let full = false;
    const { engine, calls } = await harness(store, () => {
      if (!full) return;
      // The file may not grow past its size now: SQLite answers as a full disk does (SQLITE_FULL).
      db.pragma(`max_page_count = ${String(db.pragma('page_count', { simple: true }))}`);
    });
    try {
      full = true;
      const cut = await engine.run('three', {});
      expect(cut.status).toBe('failed');
      expect(cut.error).toMatchObject({ code: 'STORE_WRITE_FAILED', message: expect.stringContaining('database or disk is full (SQLITE_FULL)') });
      // 'third' reads the result that could not be written: it never started. What the store
      // holds is what was written before the disk filled.
      expect(recorded(await engine.runs.get(cut.run_id))).toEqual(['first']);
      expect(calls.get('third')).toBeUndefined();

      full = false;
      db.pragma('max_page_count = 1073741823');
      const other = await engine.run('three', {});
      expect(other).toMatchObject({ status: 'succeeded', outputs: { n: 1 } });

      const resumed = await engine.resume(cut.run_id);
      expect(resumed).toMatchObject({ status: 'succeeded', outputs: { n: 2 } });
      // first ran for the cut run and the other one, not again on resume.
      expect(calls.get('first')).toBe(2);
    } finally {
      await engine.close();
      await store.close();
    }
  });

  it('a read-only file: `toolchain run` fails with STORE_WRITE_FAILED before any step runs; `toolchain runs` still lists the history', async () => {
    const project = join(REPO, 'test', 'fixtures', 'serve', 'project');
    const store = `sqlite:${join(dir, 'runs.db')}`;
    const earlier = await runCli(['run', 'nap', '--input', 'ms=1', '--store', store], { cwd: project });
    expect(earlier.code).toBe(0);
    const id = /^run (\S+)/m.exec(earlier.stderr)![1]!;
    chmodSync(join(dir, 'runs.db'), 0o444);
    chmodSync(dir, 0o777); // SQLite may still make its -shm file next to it
    // root writes any file: the CLI runs as nobody, with a cache folder of its own.
    const as = process.getuid?.() === 0 ? NOBODY : undefined;
    const env = { TOOLCHAIN_CACHE_DIR: join(dir, 'cache') };
    const refused = await runCli(['run', 'nap', '--input', 'ms=1', '--store', store], { cwd: project, env, ...(as ? { as } : {}) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/STORE_WRITE_FAILED .*attempt to write a readonly database \(SQLITE_READONLY\)/);
    expect(refused.stderr).not.toMatch(STACK_LINE);
    const listed = await runCli(['runs', '--json', '--store', store], { cwd: project, env, ...(as ? { as } : {}) });
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { run_id: string; status: string }[]).map((r) => [r.run_id, r.status])).toEqual([[id, 'succeeded']]);
  });
});

describe('toolchain with a corrupt or foreign runs.db', () => {
  it('says what the file is and exits 2, for run and for runs', async () => {
    const file = join(dir, 'runs.db');
    writeFileSync(file, 'these are my notes, not a database\n'.repeat(100));
    for (const args of [['runs'], ['run', 'three']]) {
      const { code, stderr } = await runCli([...args, '--store', `sqlite:${file}`], { cwd: dir });
      expect(code).toBe(2);
      expect(stderr).toContain(`STORE_CORRUPT sqlite:${file} is not a toolchain run store (not an SQLite database); give the store a file of its own`);
      expect(stderr).not.toMatch(STACK_LINE);
    }
  });
});

describe('PostgreSQL stopped during a run', () => {
  let server: PrivatePostgres;
  beforeAll(async () => {
    server = await startPrivatePostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.destroy();
  }, 60_000);

  it('fails the run with STORE_UNAVAILABLE; once the server is back the engine serves on and the run resumes', async () => {
    let stop = false;
    const { engine, calls } = await harness(`${server.url}?schema=faults`, async () => {
      if (stop) await server.stop('fast');
    });
    try {
      stop = true;
      const cut = await engine.run('three', {});
      stop = false;
      expect(cut.status).toBe('failed');
      expect(cut.error?.code).toBe('STORE_UNAVAILABLE');
      await server.start();
      expect(recorded(await engine.runs.get(cut.run_id))).toEqual(['first']);
      expect(calls.get('third')).toBeUndefined();
      expect(await engine.run('three', {})).toMatchObject({ status: 'succeeded', outputs: { n: 1 } });
      expect(await engine.resume(cut.run_id)).toMatchObject({ status: 'succeeded', outputs: { n: 2 } });
      expect(calls.get('first')).toBe(2);
    } finally {
      await engine.close();
    }
  }, 60_000);
});
