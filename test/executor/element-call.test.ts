import { afterEach, describe, expect, it } from 'vitest';
import { openEngine, type OpenedEngine } from '../../src/engine/engine.js';

// One element of a distributed for_each, as a queue worker runs it for another worker's run
// (the engine's worker side): a cancellation that came before the call began means no call.

const CHAIN = `name: fan
inputs: { items: array }
steps:
  - name: each
    tool: mark
    for_each: $.items
    input_map: { n: $.item }
`;

let opened: OpenedEngine | undefined;
afterEach(async () => {
  await opened?.engine.close();
  opened = undefined;
});

async function withMark(): Promise<{ calls: number[] }> {
  opened = await openEngine({ cache: 'off' });
  const seen = { calls: [] as number[] };
  opened.engine.registerTool({ name: 'mark', parameters: { type: 'object', properties: { n: { type: 'integer' } } }, handler: (a: { n: number }) => (seen.calls.push(a.n), { n: a.n }) });
  opened.engine.addChain(CHAIN);
  return seen;
}

describe('a distributed element', () => {
  it('is called with the arguments it was given', async () => {
    const seen = await withMark();
    const outcome = await opened!.worker.callElement('fan', 'each', { index: 0, args: { n: 7 } }, 'run-1', new AbortController().signal);
    expect(outcome).toMatchObject({ ok: true, output: { n: 7 }, attempts: 1 });
    expect(seen.calls).toEqual([7]);
  });

  it('is not called when its run was cancelled before the call began', async () => {
    const seen = await withMark();
    const cancelled = new AbortController();
    cancelled.abort();
    const outcome = await opened!.worker.callElement('fan', 'each', { index: 0, args: { n: 7 } }, 'run-1', cancelled.signal);
    expect(outcome).toMatchObject({ ok: false, error: { code: 'ABORTED' }, attempts: 0 });
    expect(seen.calls).toEqual([]);
  });
});
