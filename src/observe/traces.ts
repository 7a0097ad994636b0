import type { Span, Tracer } from '@opentelemetry/api';
import { lazyPackage } from '../common/lazy-package.js';
import type { RunEvent } from '../run-model/events.js';
import { toolLabel, type PlanSource } from './plan-source.js';
import { eventStep } from '../compiler/handler-phase.js';
import type { HandlerPhase } from '../run-model/result.js';

// OpenTelemetry spans from run events, through @opentelemetry/api only: the host
// application registers an SDK and exporter if it wants traces; without one, the API hands out
// non-recording spans and a run is not followed at all. One span per run (a sub-chain's run is a
// child of the attempt of the step that started it) and one per step attempt, child of its run.
// Times come from the events, so spans line up with the run's own timestamps.

export interface RunTracer {
  onEvent(event: RunEvent): void;
}

interface TracedRun {
  readonly span: Span;
  /** The attempt in progress of each running step, by step index. */
  readonly attempts: Map<number, Span>;
  /** Step name → index, for the sub-chains a step starts (their events name the parent step). */
  readonly indexByName: Map<string, number>;
}

const otel = lazyPackage<typeof import('@opentelemetry/api')>('@opentelemetry/api');
// SpanStatusCode's values (an OTel API enum, stable since 1.0): no need to load the API for them.
const ERROR = 2;
const OK = 1;

export function createRunTracer(plans: PlanSource, tracer: Tracer = otel().trace.getTracer('toolchain')): RunTracer {
  const { context, trace } = otel();
  const runs = new Map<string, TracedRun>();
  /** Attempt spans that are a fallback call rather than an attempt of the step's own call. */
  const fallbacks = new WeakSet<Span>();

  function startAttempt(run: TracedRun, chain: string, index: number, step: string, attempt: number, at: number, fallback?: string, phase?: HandlerPhase): void {
    const parent = trace.setSpan(context.active(), run.span);
    const span = tracer.startSpan(`step ${step}`, {
      startTime: at,
      attributes: {
        'toolchain.chain': chain,
        'toolchain.step': step,
        'toolchain.attempt': attempt,
        'toolchain.tool': toolLabel(eventStep(plans.chain(chain), phase, index, step)),
        ...(fallback !== undefined ? { 'toolchain.fallback': fallback } : {}),
        ...(phase !== undefined ? { 'toolchain.phase': phase } : {}),
      },
    }, parent);
    run.attempts.set(index, span);
    if (fallback !== undefined) fallbacks.add(span);
  }

  function endAttempt(run: TracedRun, index: number, at: number, error?: { code: string; message: string }): void {
    const span = run.attempts.get(index);
    if (span === undefined) return;
    run.attempts.delete(index);
    if (error) {
      span.setAttribute('toolchain.error_code', error.code);
      span.setStatus({ code: ERROR, message: `${error.code}: ${error.message}` });
    } else span.setStatus({ code: OK });
    span.end(at);
  }

  function onEvent(e: RunEvent): void {
    if (e.type === 'run:started') {
      const parentRun = e.parent ? runs.get(e.parent.run_id) : undefined;
      if (e.parent && !parentRun) return; // the parent run is not traced
      const parentSpan = parentRun ? (parentRun.attempts.get(parentRun.indexByName.get(e.parent!.step) ?? -1) ?? parentRun.span) : undefined;
      const ctx = parentSpan ? trace.setSpan(context.active(), parentSpan) : context.active();
      const span = tracer.startSpan(`run ${e.chain}`, { startTime: e.timestamp, attributes: { 'toolchain.chain': e.chain, 'toolchain.run_id': e.run_id } }, ctx);
      if (!span.isRecording()) return;
      runs.set(e.run_id, { span, attempts: new Map(), indexByName: new Map() });
      return;
    }
    if (runs.size === 0) return;
    const run = runs.get(e.run_id);
    if (run === undefined) return;
    switch (e.type) {
      case 'step:started':
        run.indexByName.set(e.step, e.index);
        startAttempt(run, e.chain, e.index, e.step, e.attempt, e.timestamp, undefined, e.phase);
        return;
      case 'step:retrying':
        // A for_each element's retry is a moment in the step's span, not an attempt of the step.
        if (e.item !== undefined) {
          run.attempts.get(e.index)?.addEvent('item retrying', { item: e.item, attempt: e.attempt, 'toolchain.error_code': e.error.code }, e.timestamp);
          return;
        }
        endAttempt(run, e.index, e.timestamp, e.error);
        startAttempt(run, e.chain, e.index, e.step, e.attempt + 1, e.timestamp + e.delay_ms, e.fallback, e.phase);
        return;
      case 'step:succeeded': {
        const open = run.attempts.get(e.index);
        // A fixed-output fallback answers without a step:retrying: the open attempt failed.
        if (e.fallback !== undefined && open !== undefined && !fallbacks.has(open)) {
          open.setAttribute('toolchain.fallback_used', e.fallback);
          endAttempt(run, e.index, e.timestamp, { code: 'FAILED', message: `the attempt failed; the ${e.fallback} fallback answered` });
        } else endAttempt(run, e.index, e.timestamp);
        return;
      }
      case 'step:failed':
        endAttempt(run, e.index, e.timestamp, e.error);
        return;
      case 'run:finished':
        for (const index of [...run.attempts.keys()]) endAttempt(run, index, e.timestamp, { code: 'ABORTED', message: 'the run ended' });
        if (e.status !== 'succeeded' && e.error) run.span.setStatus({ code: ERROR, message: `${e.error.code}: ${e.error.message}` });
        else run.span.setStatus({ code: OK });
        run.span.setAttribute('toolchain.status', e.status);
        run.span.end(e.timestamp);
        runs.delete(e.run_id);
        return;
      default:
        return;
    }
  }

  return { onEvent };
}
