import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { createObserver } from '../../src/observe/index.js';
import { createCliLogger } from '../../src/observe/cli-logger.js';
import { serveEngine } from '../helpers/serve-engine.js';

// Structured logs: one JSON line per run event and per ctx.log() call, each with its run id and
// (for steps) its step and attempt; pretty lines for --verbose on a terminal.

function collector(isTTY = false): Writable & { lines: string[]; isTTY: boolean } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return Object.assign(stream, { lines, isTTY });
}

describe('logs', () => {
  it('writes one JSON line per event (step starts at debug) and per ctx.log(), with the run id and step on each', async () => {
    const out = collector();
    let engine: Engine | undefined;
    const observer = createObserver({ chain: (n) => engine?.chain(n) }, { logger: pino({ level: 'info' }, out), metrics: false, traces: false });
    engine = await serveEngine({ logger: observer.log });
    try {
      const flaky = await engine.run('flaky', {}, { onEvent: observer.onEvent });
      const form = await engine.run('form', { name: 'Ada' }, { onEvent: observer.onEvent });
      const lines = out.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const ofRun = (id: string): Record<string, unknown>[] => lines.filter((l) => l.run_id === id);
      expect(ofRun(flaky.run_id).map((l) => `${String(l.event)}${l.step ? ` ${String(l.step)}` : ''}`)).toEqual([
        'run:started',
        'step:retrying shaky',
        'step:retrying shaky',
        'step:succeeded shaky',
        'step:retrying rescued',
        'step:succeeded rescued',
        'run:finished',
      ]);
      expect(lines.every((l) => typeof l.run_id === 'string' && typeof l.time === 'number')).toBe(true);
      expect(lines.filter((l) => String(l.event).startsWith('step:')).every((l) => typeof l.step === 'string' && typeof l.attempt === 'number')).toBe(true);
      const retry = ofRun(flaky.run_id).find((l) => l.event === 'step:retrying')!;
      expect(retry).toMatchObject({ level: 40, attempt: 1, error: { code: 'FLAKY' }, delay_ms: 20 });
      const tool = ofRun(form.run_id).find((l) => l.source === 'tool')!;
      expect(tool).toMatchObject({ msg: 'echoing', step: 'greet', attempt: 1, value: 'en: hello Ada x2false', level: 30 });
      // At debug level every event has its line.
      const debug = collector();
      const verbose = createObserver(engine, { logger: pino({ level: 'debug' }, debug), metrics: false, traces: false });
      const again = await engine.run('three_noop', {}, { onEvent: verbose.onEvent });
      expect(debug.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.run_id === again.run_id).map((l) => l.event)).toEqual([
        'run:started', 'step:started', 'step:succeeded', 'step:started', 'step:succeeded', 'step:started', 'step:succeeded', 'run:finished',
      ]);
    } finally {
      await engine.close();
    }
  });

  it('a failed step and run log at error level with the error code', async () => {
    const out = collector();
    const engine = await serveEngine();
    try {
      const observer = createObserver(engine, { logger: pino({ level: 'info' }, out), metrics: false, traces: false });
      await engine.run('failing', {}, { onEvent: observer.onEvent });
      const lines = out.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.event === 'step:failed')).toMatchObject({ level: 50, step: 'explode', error: { code: 'BOOM' } });
      expect(lines.find((l) => l.event === 'run:finished')).toMatchObject({ level: 50, status: 'failed', error: { code: 'BOOM', step: 'explode' } });
    } finally {
      await engine.close();
    }
  });

  it('--verbose on a terminal is pretty; otherwise JSON, written once per event-loop turn', async () => {
    const tty = collector(true);
    createCliLogger({ stream: tty, verbose: true }).info({ event: 'step:started', run_id: 'r1', step: 'a' }, 'step:started');
    expect(tty.lines.join('\n')).toMatch(/INFO.*step:started a/);
    expect(() => JSON.parse(tty.lines[0]!)).toThrow();
    const pipe = collector(false);
    const json = createCliLogger({ stream: pipe, verbose: true });
    json.debug({ run_id: 'r1' }, 'hello');
    json.info({ run_id: 'r1' }, 'again');
    expect(pipe.lines).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(pipe.lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { level: 20, time: expect.any(Number), run_id: 'r1', msg: 'hello' },
      { level: 30, time: expect.any(Number), run_id: 'r1', msg: 'again' },
    ]);
  });
});
