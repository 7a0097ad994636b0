import { describe, expect, it } from 'vitest';
import { createEngine, type RunEvent } from '../../src/index.js';

// A run in the default memory store is recorded, ended and cancelled through its store entry
// (no per-run bookkeeping of the engine's own); cancelling it by id still stops it.

const CHAIN = `name: wait
steps:
  - { name: first, tool: quick }
  - { name: hold, tool: hang }
  - { name: after, tool: quick }
`;

describe('cancelling a run of the memory store', () => {
  it('stops it at once: ABORTED, the step at work aborted through its signal, the run recorded cancelled', async () => {
    const engine = await createEngine({ cache: 'off' });
    let aborted = false;
    engine.registerTool({ name: 'quick', handler: () => ({ ok: true }) });
    engine.registerTool({
      name: 'hang',
      handler: (_args, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => ((aborted = true), reject(ctx.signal.reason)));
        }),
    });
    engine.addChain(CHAIN);
    let runId = '';
    const running = engine.run('wait', {}, { onEvent: (e: RunEvent) => void (e.type === 'step:started' && e.step === 'hold' && (runId = e.run_id)) });
    await new Promise((r) => setTimeout(r, 20));
    expect(runId).not.toBe('');
    expect((await engine.runs.get(runId))?.status).toBe('running');
    // Live here: neither resumed nor taken over by the id.
    const again = await engine.resume(runId);
    expect(again.error?.code).toBe('RUN_IN_PROGRESS');
    expect(await engine.cancel(runId)).toBe(true);
    const result = await running;
    expect(result.status).toBe('cancelled');
    expect(result.error?.code).toBe('ABORTED');
    expect(result.steps.hold?.status).toBe('failed');
    expect(result.steps.after?.status).toBe('pending');
    expect(aborted).toBe(true);
    expect((await engine.runs.get(runId))?.status).toBe('cancelled');
    expect(await engine.cancel(runId)).toBe(false);
    // Distinct ids, UUID-shaped, from one engine.
    const ids = new Set([runId, (await engine.run('wait', {}, { signal: AbortSignal.timeout(1) })).run_id]);
    expect(ids.size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await engine.close();
  });
});
