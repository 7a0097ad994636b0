import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type IsolationLevel, type LogEntry, type RunResult } from '../../src/index.js';
import { removeDir, tempDir, waitFor, writeFiles } from '../fixtures/plugins/helpers.js';
import { isAlive as alive } from '../helpers/processes.js';

// Plugin code is contained. With `isolation: worker` (threads) or
// `process` (child processes) a handler that loops, exits, crashes, prints, pollutes prototypes or
// hogs memory fails its own call at most; the engine keeps serving. (The fixture plugin `rogue`
// misbehaves on purpose; its manifest says nothing about isolation, the engine's floor decides.)

const PLUGINS = join(import.meta.dirname, '..', 'fixtures', 'isolation', 'plugins');

function chain(name: string, tool: string, extra = ''): string {
  return `name: ${name}\nsteps:\n  - name: s\n    tool: ${tool}\n${extra}`;
}

describe.each(['worker', 'process'] as const)('isolation: %s', (level) => {
  let engine: Engine;
  const logs: LogEntry[] = [];
  let n = 0;
  const run = (tool: string, extra = '', input: unknown = {}): Promise<RunResult> => {
    const name = `c${++n}`;
    engine.addChain(chain(name, tool, extra));
    return engine.run(name, input);
  };

  beforeAll(async () => {
    engine = await createEngine({ pluginsDir: PLUGINS, cache: 'off', isolation: { level, memoryMb: 64, graceMs: 100 }, logger: (e) => logs.push(e) });
  });
  afterAll(() => engine.close());

  it('runs the handler outside the engine: another thread, or another process', async () => {
    const result = await run('where');
    expect(result.status).toBe('succeeded');
    const where = result.outputs as { pid: number; main_thread: boolean };
    if (level === 'worker') expect(where).toEqual({ pid: process.pid, main_thread: false });
    else expect(where.pid).not.toBe(process.pid);
  });

  it('hands ctx fields, arguments, ctx.log and the result across as copies', async () => {
    const result = await run('echo', '    input_map: { list: [1, 2], nested: { a: "x" } }\n');
    expect(result.outputs).toMatchObject({ args: { list: [1, 2], nested: { a: 'x' } }, attempt: 1, run_id: result.run_id, step: 's' });
    expect(logs.some((l) => l.run_id === result.run_id && l.message === 'echoing' && (l.fields as { keys: string[] }).keys.length === 2)).toBe(true);
  });

  it('a handler stuck in while(true) times out; its worker is terminated and replaced, and the next call works', async () => {
    const stuck = await run('spin', '    timeout: 200ms\n');
    expect(stuck.error).toMatchObject({ code: 'TIMEOUT', step: 's' });
    // All four workers may be taken by spinners; each is terminated after its grace period.
    const spinners = await Promise.all([1, 2, 3, 4, 5].map(() => run('spin', '    timeout: 100ms\n')));
    expect(spinners.map((r) => r.error?.code)).toEqual(['TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'TIMEOUT']);
    expect((await run('echo')).status).toBe('succeeded');
  });

  it("the chain's own timeout ends a run stuck in while(true) too, and frees the worker", async () => {
    engine.addChain('name: stuck_chain\ntimeout: 200ms\nsteps:\n  - name: s\n    tool: spin\n');
    const result = await engine.run('stuck_chain');
    expect(result.error?.code).toBe('RUN_TIMEOUT');
    expect((await run('echo')).status).toBe('succeeded');
  });

  it('process.exit in a handler fails that call with TOOL_CRASHED and the engine keeps serving', async () => {
    const result = await run('quit', '    input_map: { code: 0 }\n');
    expect(result.error?.code).toBe('TOOL_CRASHED');
    expect(result.error?.message).toContain("tool 'rogue/quit' crashed its worker");
    expect(result.error?.message).toContain('exited with code 0');
    expect((await run('echo')).status).toBe('succeeded');
  });

  it('an exception thrown from a timer during the call fails it with TOOL_CRASHED, naming the error', async () => {
    const result = await run('crash_now');
    expect(result.error).toMatchObject({ code: 'TOOL_CRASHED' });
    expect(result.error?.message).toContain('thrown from a timer during the call');
  });

  it('an exception or rejection after the call returned is logged with the plugin named; the engine keeps serving', async () => {
    expect((await run('throw_later')).status).toBe('succeeded');
    await waitFor(() => expect(logs.some((l) => /plugin 'rogue' ended between calls: .*thrown from a timer after returning/.test(l.message))).toBe(true));
    expect((await run('reject_later')).status).toBe('succeeded');
    await waitFor(() => expect(logs.some((l) => /plugin 'rogue' ended between calls: .*rejected after returning/.test(l.message))).toBe(true));
    expect((await run('echo')).status).toBe('succeeded');
  });

  it("what a handler writes to stdout and stderr goes to the log, as the call's lines, never to the engine's stdout", async () => {
    const written: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      written.push(String(chunk));
      return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
    let result: RunResult;
    try {
      result = await run('print');
    } finally {
      process.stdout.write = write;
    }
    expect(result.status).toBe('succeeded');
    expect(written.join('')).not.toContain('from a handler');
    const lines = logs.filter((l) => l.run_id === result.run_id).map((l) => [l.message, (l.fields as { stream?: string }).stream]);
    expect(lines).toEqual([
      ['console.log from a handler', 'stdout'],
      ['stdout from a handler', 'stdout'],
      ['stderr from a handler', 'stderr'],
    ]);
  });

  it("a handler that patches Object.prototype and JSON changes its worker's, never the engine's", async () => {
    expect((await run('pollute')).status).toBe('succeeded');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect([1, 2].map((x) => x * 2)).toEqual([2, 4]);
    expect(JSON.stringify({ a: 1 })).toBe('{"a":1}');
    const after = await run('echo', '    input_map: { a: 1 }\n');
    expect(after.status).toBe('succeeded');
  });

  it('memory is bounded: a handler that allocates without end crashes only its own call', async () => {
    const result = await run('hog', '    timeout: 30s\n');
    expect(result.error?.code).toBe('TOOL_CRASHED');
    expect((await run('echo')).status).toBe('succeeded');
  });

  it("a timeout fires the worker's ctx.signal, so a handler that listens can clean up", async () => {
    const result = await run('patient', '    timeout: 100ms\n');
    expect(result.error?.code).toBe('TIMEOUT');
    await waitFor(() => expect(logs.some((l) => l.run_id === result.run_id && l.message === 'cleaned up')).toBe(true));
  });

  it('a cancelled run aborts the call in its worker', async () => {
    engine.addChain(chain('cancel_me', 'patient'));
    const controller = new AbortController();
    const pending = engine.run('cancel_me', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const result = await pending;
    expect(result.error?.code).toBe('ABORTED');
    await waitFor(() => expect(logs.some((l) => l.run_id === result.run_id && l.message === 'cleaned up')).toBe(true));
  });

  it('a call that nothing can ever settle fails with TOOL_STALLED instead of hanging', async () => {
    const result = await run('never');
    expect(result.error?.code).toBe('TOOL_STALLED');
    expect(result.error?.message).toContain("tool 'rogue/never' never settled");
  });

  it('a result that is not JSON is RESULT_INVALID at its path; a thrown code crosses as it is', async () => {
    expect((await run('unclonable')).error).toMatchObject({ code: 'RESULT_INVALID', message: expect.stringContaining('at /fn: a function is not JSON') });
    expect((await run('coded')).error).toMatchObject({ code: 'RATE_LIMITED', message: 'slow down' });
  });

  it('a handler that mutates its arguments changes only its copy', async () => {
    engine.addChain(
      'name: mutating\ninputs: { data: object }\nsteps:\n  - name: m\n    tool: mutate\n    input_map: { d: $.data }\n  - name: e\n    tool: echo\n    input_map: { d: $.data }\n',
    );
    const input = { data: { list: [1] } };
    const result = await engine.run('mutating', input);
    expect((result.outputs as { args: unknown }).args).toEqual({ d: { list: [1] } });
    expect(input).toEqual({ data: { list: [1] } });
  });
});

describe('choosing the level', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('toolchain-isolation-');
    const where = 'import { isMainThread } from "node:worker_threads";\nexport default () => ({ pid: process.pid, main_thread: isMainThread });\n';
    await writeFiles(dir, {
      'plugins/plain/plugin.yaml': 'name: plain\nversion: 1.0.0\ntools:\n  - name: plain_where\n',
      'plugins/plain/tools/plain_where.js': where,
      'plugins/threaded/plugin.yaml': 'name: threaded\nversion: 1.0.0\nisolation: worker\ntools:\n  - name: threaded_where\n',
      'plugins/threaded/tools/threaded_where.js': where,
      'plugins/forked/plugin.yaml': 'name: forked\nversion: 1.0.0\nisolation: process\ntools:\n  - name: forked_where\n',
      'plugins/forked/tools/forked_where.js': where,
      'broken/bad/plugin.yaml': 'name: bad\nversion: 1.0.0\nisolation: worker\ntools:\n  - name: boom\n',
      'broken/bad/tools/boom.js': 'throw new Error("broken at import");\n',
    });
  });
  afterAll(() => removeDir(dir));

  async function places(isolation: IsolationLevel | undefined): Promise<Record<string, string>> {
    const engine = await createEngine({ pluginsDir: join(dir, 'plugins'), cache: 'off', ...(isolation ? { isolation } : {}) });
    try {
      const out: Record<string, string> = {};
      for (const tool of ['plain_where', 'threaded_where', 'forked_where']) {
        engine.addChain(chain(`w_${tool}`, tool));
        const where = (await engine.run(`w_${tool}`)).outputs as { pid: number; main_thread: boolean };
        out[tool] = where.pid !== process.pid ? 'process' : where.main_thread ? 'none' : 'worker';
      }
      return out;
    } finally {
      await engine.close();
    }
  }

  it("each plugin's manifest decides by default; the engine's level raises every plugin to at least its own", async () => {
    expect(await places(undefined)).toEqual({ plain_where: 'none', threaded_where: 'worker', forked_where: 'process' });
    expect(await places('worker')).toEqual({ plain_where: 'worker', threaded_where: 'worker', forked_where: 'process' });
    expect(await places('process')).toEqual({ plain_where: 'process', threaded_where: 'process', forked_where: 'process' });
  });

  it('an isolated module that throws at import is HANDLER_LOAD at load, placed at the tool, and its code never ran in the engine', async () => {
    const engine = await createEngine({ pluginsDir: join(dir, 'broken'), cache: 'off' });
    try {
      const [status] = engine.plugins();
      // The broken tool is left out on its own; this plugin has no other.
      expect(status?.status).toBe('active');
      expect(status?.tools).toEqual([]);
      expect(status?.diagnostics[0]).toMatchObject({ code: 'HANDLER_LOAD', line: 5 });
      expect(status?.diagnostics[0]?.message).toContain('broken at import');
    } finally {
      await engine.close();
    }
  });

  it("a reload ends the replaced version's worker processes, and closing the engine ends the rest", async () => {
    const engine = await createEngine({ pluginsDir: join(dir, 'plugins'), cache: 'off', watch: true });
    try {
      engine.addChain(chain('w_forked', 'forked_where'));
      const first = ((await engine.run('w_forked')).outputs as { pid: number }).pid;
      expect(alive(first)).toBe(true);
      await writeFiles(dir, { 'plugins/forked/tools/forked_where.js': 'export default () => ({ pid: process.pid, version: 2 });\n' });
      const second = await waitFor(async () => {
        const out = (await engine.run('w_forked')).outputs as { pid: number; version?: number };
        if (out.version !== 2) throw new Error('not reloaded yet');
        return out.pid;
      }, 10_000, 50);
      expect(second).not.toBe(first);
      await waitFor(() => expect(alive(first)).toBe(false));
      await engine.close();
      await waitFor(() => expect(alive(second)).toBe(false));
    } finally {
      await engine.close();
    }
  });

  it('a bad isolation option is USAGE, naming the option and the value', async () => {
    await expect(createEngine({ isolation: 'threads' as IsolationLevel })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining("'isolation'") });
    await expect(createEngine({ isolation: { memoryMb: 1 } })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('isolation.memoryMb') });
  });
});
