import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/run-model/events.js';
import { RunView } from '../../src/serve/run-view.js';
import { serveEngine } from '../helpers/serve-engine.js';

// The run as `GET /api/runs/ID` and the inspector show it, folded from a real run's events:
// skipped steps, for_each elements that retry, resolved inputs.

const CHAIN = `
name: shapes
inputs:
  words: { type: array, default: [a, bb, ccc] }
  go: { type: boolean, default: false }
steps:
  - name: each
    tool: flaky_item
    for_each: $.words
    input_map: { word: $.item }
    retry: { max_attempts: 2, backoff: { initial: 5ms, factor: 1, max: 5ms, jitter: none } }
  - name: maybe
    tool: noop
    when: $.go == true
  - name: after_maybe
    tool: echo
    input_map: { value: $.maybe }
  - name: last
    tool: echo
    input_map: { value: "{{ $.each }}" }
`;

describe('RunView', () => {
  it('shows skips with their reason, for_each retries as marks, and resolved inputs', async () => {
    const engine = await serveEngine();
    try {
      const seen = new Set<string>();
      engine.registerTool({
        name: 'flaky_item',
        handler: (args) => {
          const word = String(args.word);
          // 'bb' fails its first attempt.
          if (word === 'bb' && !seen.has(word)) {
            seen.add(word);
            throw Object.assign(new Error('not yet'), { code: 'FLAKY' });
          }
          return word.length;
        },
      });
      engine.addChain(CHAIN);
      const events: RunEvent[] = [];
      const result = await engine.run('shapes', {}, { onEvent: (e) => events.push(e) });
      expect(result.status).toBe('succeeded');
      const started = events[0]!;
      const view = new RunView(result.run_id, 'shapes', {}, started.timestamp, (n) => engine.chain(n));
      for (const e of events) view.apply(e);
      const run = view.detail();
      expect(run.status).toBe('succeeded');
      expect(run.steps.maybe).toMatchObject({ status: 'skipped', skip_reason: 'when' });
      expect(run.steps.after_maybe).toMatchObject({ status: 'skipped', skip_reason: 'dependency' });
      expect(run.steps.each!.output).toEqual([1, 2, 3]);
      expect(run.steps.each!.input).toEqual({ for_each: '$.words', items: ['a', 'bb', 'ccc'] });
      const marks = run.steps.each!.timeline.filter((a) => a.item !== undefined);
      expect(marks).toEqual([expect.objectContaining({ item: 1, attempt: 1, status: 'failed', error: { code: 'FLAKY', message: 'not yet' } })]);
      expect(run.steps.each!.timeline.filter((a) => a.item === undefined).map((a) => a.status)).toEqual(['succeeded']);
      expect(run.steps.last!.input).toEqual({ value: [1, 2, 3] }); // a lone placeholder yields the value itself
      expect(view.summary()).toEqual({ run_id: result.run_id, chain: 'shapes', status: 'succeeded', started_at: started.timestamp, finished_at: expect.any(Number), duration_ms: result.duration_ms, interrupted: false });
    } finally {
      await engine.close();
    }
  });
});
