// What a caller may pass to a run through the public entry, and what it may not: the executor's
// bookkeeping (a recorder, restored steps, a control, waits, the start time) and the engine's
// own plumbing (taking a live run over, waking a waiting one) are not in the public types, and a
// caller that forces them in with a cast is ignored.
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type RunEvent, type RunOptions, type RunStartOptions, type StepRecord } from '../../src/index.js';

const engines: Engine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

async function engineWithCalls(): Promise<Engine & { calls: string[] }> {
  const engine = await createEngine({ cache: 'off' });
  engines.push(engine);
  const calls: string[] = [];
  engine.registerTool({ name: 'note', parameters: { type: 'object', properties: { text: {} } }, handler: (a: { text?: unknown }) => (calls.push(String(a.text)), { text: a.text }) });
  engine.addChain('name: two\nsteps:\n  - { name: first, tool: note, input_map: { text: one } }\n  - { name: second, tool: note, input_map: { text: $.first.text } }\n');
  engine.addChain('name: nap\nsteps:\n  - { name: rest, sleep: 1h }\n');
  return Object.assign(engine, { calls });
}

/** A result the engine would replay for step `first` without calling its tool, were it restored. */
const fake: StepRecord = { step: 'first', index: 0, status: 'succeeded', attempts: 1, output: { text: 'forged' }, started_at: 0, duration_ms: 0 };

describe('the public run options', () => {
  it('have no place for plumbing (type-level)', async () => {
    const engine = await engineWithCalls();
    const record = (): void => undefined;
    // @ts-expect-error a recorder is the engine's, not a caller's
    const withRecorder: RunOptions = { recorder: { record } };
    // @ts-expect-error restored steps are read from the run store, not given
    const withRestored: RunStartOptions = { restored: new Map([['first', fake]]) };
    // @ts-expect-error taking over a live run is the queue worker's
    const claim: RunStartOptions = { claimLive: true };
    // @ts-expect-error the engine's run does not take plumbing either
    const run = engine.run('two', {}, { recorder: { record } });
    expect([withRecorder, withRestored, claim]).toHaveLength(3);
    expect((await run).status).toBe('succeeded');
  });

  it('a recorder and restored steps forced in are ignored: every step runs, nothing reaches the recorder', async () => {
    const engine = await engineWithCalls();
    const recorded: string[] = [];
    const plumbing = { recorder: { record: (key: string) => void recorded.push(key) }, restored: new Map([['first', fake]]), startedAt: 0 };
    const events: RunEvent[] = [];
    const local = await engine.run('two', {}, { ...plumbing, onEvent: (e: RunEvent) => void events.push(e) } as never);
    // With a run id the run goes the store's full path (created, recorded, answered by id).
    const stored = await engine.run('two', {}, { ...plumbing, runId: 'forged-1' } as never);
    const resumed = await engine.resume('forged-1', plumbing as never);
    for (const result of [local, stored, resumed]) expect(result).toMatchObject({ status: 'succeeded', outputs: { text: 'one' } });
    expect(engine.calls).toEqual(['one', 'one', 'one', 'one']);
    expect(recorded).toEqual([]);
    expect(events.find((e) => e.type === 'run:started')?.timestamp).not.toBe(0);
    // The engine's own recorder did record the run.
    expect((await engine.runs.get('forged-1'))?.steps).toMatchObject({ first: { status: 'succeeded' }, second: { status: 'succeeded' } });
  });

  it('a wake or a claim forced into resume is ignored: a waiting run stays waiting', async () => {
    const engine = await engineWithCalls();
    const parked = await engine.run('nap', {}, { runId: 'napping', untilWaiting: true });
    expect(parked.status).toBe('waiting');
    const early = await engine.resume('napping', { wake: true, claimLive: true } as never);
    expect(early.error?.code).toBe('RUN_WAITING');
    expect((await engine.runs.get('napping'))?.status).toBe('waiting');
    expect(await engine.cancel('napping')).toBe(true);
  });
});
