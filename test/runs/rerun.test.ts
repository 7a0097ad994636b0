import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type RunEvent } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';

// Re-running a run from one of its steps, through the library with a real SQLite store: which
// steps run again (tool calls counted), what the new run's outputs are, the origin it records,
// inputs replaced key by key, and each refusal with its code.

const root = mkdtempSync(join(tmpdir(), 'toolchain-rerun-'));
let n = 0;
const engines: Engine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

// a → b, c → d: c is parallel, so it waits for a only (not for b by order).
const DIAMOND = `name: diamond
inputs:
  x: { type: integer, default: 1 }
  y: { type: integer, default: 10 }
steps:
  - { name: a, tool: work, input_map: { label: a, value: $.y } }
  - { name: b, tool: work, input_map: { label: b, value: "{{ $.a.value }}", plus: $.x } }
  - { name: c, tool: work, parallel: true, input_map: { label: c, value: $.a.value, plus: 100 } }
  - { name: d, tool: work, input_map: { label: d, value: $.b.value, plus: $.c.value } }
outputs: { d: $.d.value, b: $.b.value, c: $.c.value }
`;

async function engineWith(chainsDir?: string): Promise<Engine & { calls: string[] }> {
  const dir = chainsDir ?? mkdtempSync(join(root, 'chains-'));
  if (chainsDir === undefined) writeFileSync(join(dir, 'diamond.yaml'), DIAMOND);
  const engine = await createEngine({ cache: 'off', store: `sqlite:${join(root, `runs-${++n}.db`)}`, chainsDir: dir });
  engines.push(engine);
  const calls: string[] = [];
  engine.registerTool({
    name: 'work',
    parameters: { type: 'object', properties: { label: { type: 'string' }, value: { type: 'number' }, plus: { type: 'number' } }, required: ['label', 'value'] },
    handler: (a: { label: string; value: number; plus?: number }) => (calls.push(a.label), { value: a.value + (a.plus ?? 0) }),
  });
  return Object.assign(engine, { calls });
}

describe('rerun', () => {
  it('from the middle of a diamond: the steps b does not lead to keep their outputs, b and d run again', async () => {
    const engine = await engineWith();
    const origin = await engine.run('diamond', {});
    expect(origin).toMatchObject({ status: 'succeeded', outputs: { b: 11, c: 110, d: 121 } });
    expect(engine.calls.sort()).toEqual(['a', 'b', 'c', 'd']);
    engine.calls.length = 0;

    const events: RunEvent[] = [];
    const again = await engine.rerun(origin.run_id, { from: 'b', input: { x: 5 }, onEvent: (e) => void events.push(e) });
    expect(again.run_id).not.toBe(origin.run_id);
    expect(again).toMatchObject({ status: 'succeeded', outputs: { b: 15, c: 110, d: 125 } });
    expect(engine.calls.sort()).toEqual(['b', 'd']);
    // The kept steps did not run: no events of theirs.
    expect(events.filter((e) => e.type === 'step:started').map((e) => 'step' in e && e.step).sort()).toEqual(['b', 'd']);

    const detail = await engine.runs.get(again.run_id);
    expect(detail).toMatchObject({ rerun_of: origin.run_id, rerun_from: 'b', input: { x: 5, y: 10 } });
    expect(detail!.steps.a).toMatchObject({ status: 'succeeded', output: { value: 10 }, kept_from: origin.run_id });
    expect(detail!.steps.c).toMatchObject({ status: 'succeeded', output: { value: 110 }, kept_from: origin.run_id });
    expect(detail!.steps.b!.kept_from).toBeUndefined();
    expect((await engine.runs.get(origin.run_id))!.reruns).toEqual([again.run_id]);

    // A re-run of the re-run, without a step: everything again, with its (overridden) input.
    engine.calls.length = 0;
    const all = await engine.rerun(again.run_id, { input: { y: 20 } });
    expect(all).toMatchObject({ status: 'succeeded', outputs: { b: 25, c: 120, d: 145 } });
    expect(engine.calls.sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(await engine.runs.get(all.run_id)).toMatchObject({ rerun_of: again.run_id, input: { x: 5, y: 20 } });
    expect((await engine.runs.get(all.run_id))!.rerun_from).toBeUndefined();
  });

  it('refuses to keep a step that read an input that now has another value (RERUN_INPUT_READ); the same value is no change', async () => {
    const engine = await engineWith();
    const origin = await engine.run('diamond', {});
    engine.calls.length = 0;
    const refused = await engine.rerun(origin.run_id, { from: 'b', input: { y: 11 } });
    expect(refused.status).toBe('failed');
    expect(refused.error?.code).toBe('RERUN_INPUT_READ');
    expect(refused.error?.message).toContain("input 'y' is read by step 'a'");
    expect(engine.calls).toEqual([]);
    expect(await engine.runs.get(refused.run_id)).toBeUndefined();
    expect((await engine.rerun(origin.run_id, { from: 'b', input: { y: 10 } })).status).toBe('succeeded');
    expect((await engine.rerun(origin.run_id, { from: 'a', input: { y: 11 } })).outputs).toEqual({ b: 12, c: 111, d: 123 });
  });

  it('refuses an unknown step with a did-you-mean, a run that has not ended, and an unknown run', async () => {
    const engine = await engineWith();
    const origin = await engine.run('diamond', {});
    const unknown = await engine.rerun(origin.run_id, { from: 'bb' });
    expect(unknown.error?.code).toBe('STEP_NOT_FOUND');
    expect(unknown.error?.message).toContain("no step 'bb' (did you mean 'b'?)");
    expect((await engine.rerun('no-such-run')).error?.code).toBe('RUN_NOT_FOUND');
    // A re-run given a recorded run's id; the refusal says why when it is sent as JSON too.
    const taken = JSON.parse(JSON.stringify(await engine.rerun(origin.run_id, { runId: origin.run_id })));
    expect(taken.error).toEqual({ code: 'RUN_ID_CONFLICT', message: expect.stringContaining('a re-run is a new run') });

    engine.addChain(`name: nap
steps:
  - { name: rest, sleep: 1h }
`);
    const waiting = await engine.run('nap', {}, { untilWaiting: true });
    expect(waiting.status).toBe('waiting');
    const refused = await engine.rerun(waiting.run_id);
    expect(refused.error?.code).toBe('RUN_NOT_FINISHED');
    expect(refused.error?.message).toContain('is waiting');
  });

  it('is refused with CHAIN_CHANGED after the chain file changed, and runs the new definition with allowChanged', async () => {
    const dir = mkdtempSync(join(root, 'chains-'));
    writeFileSync(join(dir, 'diamond.yaml'), DIAMOND);
    const engine = await engineWith(dir);
    const origin = await engine.run('diamond', {});
    writeFileSync(join(dir, 'diamond.yaml'), DIAMOND.replace('plus: 100', 'plus: 1000'));
    await engine.reloadChains();
    engine.calls.length = 0;
    const refused = await engine.rerun(origin.run_id, { from: 'c' });
    expect(refused.error?.code).toBe('CHAIN_CHANGED');
    expect(engine.calls).toEqual([]);
    const allowed = await engine.rerun(origin.run_id, { from: 'c', allowChanged: true });
    expect(allowed).toMatchObject({ status: 'succeeded', outputs: { b: 11, c: 1010, d: 1021 } });
    expect(engine.calls.sort()).toEqual(['c', 'd']);
  });

  it("keeps the results of a failed origin's steps that succeeded, and runs a step it would keep that has no success", async () => {
    const engine = await engineWith();
    let fail = true;
    engine.registerTool({ name: 'shaky', parameters: { type: 'object', properties: { z: { type: 'integer' } } }, handler: (args: { z?: number }) => {
      engine.calls.push(`shaky ${args.z}`);
      if (fail) throw new Error('down');
      return { ok: true };
    } });
    engine.addChain(`name: shaky_chain
inputs: { z: { type: integer, default: 0 } }
steps:
  - { name: first, tool: work, input_map: { label: first, value: 1 } }
  - { name: flaky, tool: shaky, parallel: true, input_map: { z: $.z } }
  - { name: last, tool: work, input_map: { label: last, value: $.first.value } }
`);
    const origin = await engine.run('shaky_chain', {});
    expect(origin.status).toBe('failed');
    engine.calls.length = 0;
    fail = false;
    // flaky is not downstream of last, but it has no success to keep: it runs, so the input it reads may change.
    const again = await engine.rerun(origin.run_id, { from: 'last', input: { z: 7 } });
    expect(again.status).toBe('succeeded');
    expect(engine.calls.sort()).toEqual(['last', 'shaky 7']);
    const store = await openStore(`sqlite:${join(root, `runs-${n}.db`)}`);
    const kept = (await store.getSteps(again.run_id)).filter((s) => s.kept_from !== undefined).map((s) => s.key);
    await store.close();
    expect(kept).toEqual(['first']);
  });
});
