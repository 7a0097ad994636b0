import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { createObserver } from '../../src/observe/index.js';
import { serveEngine } from '../helpers/serve-engine.js';

// Spans through @opentelemetry/api, recorded by an SDK the test registers (the host
// application's job in real use): one per run, one per step attempt, sub-chains nested.

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let engine: Engine;

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  engine = await serveEngine();
});
afterAll(async () => {
  await engine.close();
  trace.disable();
});

const parentId = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;
const byName = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((s) => s.name === name);

describe('traces', () => {
  it('a span per run and per attempt; retries are sibling attempts under the run', async () => {
    exporter.reset();
    const observer = createObserver(engine, { metrics: false, logs: false });
    const result = await engine.run('flaky', {}, { onEvent: observer.onEvent });
    expect(result.status).toBe('succeeded');
    const spans = exporter.getFinishedSpans();
    const [run] = byName(spans, 'run flaky');
    expect(run).toBeDefined();
    expect(parentId(run!)).toBeUndefined();
    expect(run!.attributes['toolchain.run_id']).toBe(result.run_id);
    const shaky = byName(spans, 'step shaky');
    expect(shaky.map((s) => s.attributes['toolchain.attempt'])).toEqual([1, 2, 3]);
    expect(shaky.map((s) => s.status.code)).toEqual([2, 2, 1]); // ERROR, ERROR, OK
    expect(shaky[0]!.attributes['toolchain.error_code']).toBe('FLAKY');
    expect(shaky.every((s) => parentId(s) === run!.spanContext().spanId && s.spanContext().traceId === run!.spanContext().traceId)).toBe(true);
    expect(shaky.every((s) => s.attributes['toolchain.tool'] === 'fail_times')).toBe(true);
    const rescued = byName(spans, 'step rescued');
    expect(rescued).toHaveLength(2);
    expect(rescued.every((s) => s.status.code === 2)).toBe(true);
  });

  it("a sub-chain's run span is a child of the step that started it", async () => {
    exporter.reset();
    const observer = createObserver(engine, { metrics: false, logs: false });
    await engine.run('nested', {}, { onEvent: observer.onEvent });
    const spans = exporter.getFinishedSpans();
    const outer = byName(spans, 'run nested')[0]!;
    const innerStep = byName(spans, 'step inner')[0]!;
    const innerRun = byName(spans, 'run three_noop')[0]!;
    expect(parentId(innerStep)).toBe(outer.spanContext().spanId);
    expect(parentId(innerRun)).toBe(innerStep.spanContext().spanId);
    for (const name of ['step a', 'step b', 'step c']) expect(parentId(byName(spans, name)[0]!)).toBe(innerRun.spanContext().spanId);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it('without a registered SDK nothing is followed', async () => {
    trace.disable();
    const observer = createObserver(engine, { metrics: false, logs: false });
    exporter.reset();
    await engine.run('three_noop', {}, { onEvent: observer.onEvent });
    expect(exporter.getFinishedSpans()).toEqual([]);
    trace.setGlobalTracerProvider(provider);
  });
});
