import type { Counter as CounterType, Registry } from 'prom-client';
import { lazyPackage } from '../common/lazy-package.js';
import { eventStep } from '../compiler/handler-phase.js';
import type { PlanStep } from '../compiler/plan.js';
import type { HandlerPhase } from '../run-model/result.js';
import type { RunEvent } from '../run-model/events.js';
import { CounterCells, type CounterCell } from './counter-cells.js';
import { LabelledHistogram, type HistogramChild } from './histogram.js';
import { toolLabel, type PlanSource } from './plan-source.js';
import { NOT_CALLED, REFUSED } from './run-outcome.js';

// Metrics, computed from run events by one consumer. Each engine or server has its own
// prom-client Registry (never the global default), so embedded engines and tests do not collide.
// The hot path does no label hashing: each (chain, step) gets its counter cells and histogram
// series once per plan, and a step's end is a few additions (see counter-cells.ts, histogram.ts).

/** Seconds; from 1 ms (tools that compute) to 5 min (tools that wait on the network or a model). */
export const STEP_DURATION_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export interface RunMetrics {
  readonly registry: Registry;
  onEvent(event: RunEvent): void;
  /** The Prometheus text exposition of every metric in the registry. */
  text(): Promise<string>;
  readonly contentType: string;
}

interface StepChildren {
  readonly tool: string;
  readonly succeeded: CounterCell;
  readonly failed: CounterCell;
  readonly skipped: CounterCell;
  readonly duration: HistogramChild;
  readonly callOk: CounterCell | undefined;
  readonly callError: CounterCell | undefined;
}

interface ChainChildren {
  readonly plan: object;
  readonly steps: StepChildren[];
  /** The steps of failure handling, by phase and place (`finally 0`, `compensate pay~compensate`). */
  readonly handlers: Map<string, StepChildren>;
}

const promClient = lazyPackage<typeof import('prom-client')>('prom-client');

export function createRunMetrics(plans: PlanSource, registry: Registry = new (promClient().Registry)()): RunMetrics {
  const { Counter, Gauge } = promClient();
  const stepCells = new CounterCells<'chain' | 'step' | 'tool' | 'status'>();
  const callCells = new CounterCells<'tool' | 'status'>();
  const runs = new Counter({ name: 'toolchain_runs_total', help: 'Runs finished, by chain and status (succeeded, failed, compensation_failed, cancelled).', labelNames: ['chain', 'status'] as const, registers: [registry] });
  const handlerFailures = new Counter({
    name: 'toolchain_handler_failures_total',
    help: 'Steps of failure handling that failed for good, by chain and phase (on_failure, compensate, finally); they do not change the status of their run.',
    labelNames: ['chain', 'phase'] as const,
    registers: [registry],
  });
  const steps: CounterType<'chain' | 'step' | 'tool' | 'status'> = new Counter({
    name: 'toolchain_steps_total',
    help: 'Steps finished, by chain, step, tool and status (succeeded, failed, skipped).',
    labelNames: ['chain', 'step', 'tool', 'status'] as const,
    registers: [registry],
    collect: () => stepCells.flush(steps),
  });
  const duration = new LabelledHistogram('toolchain_step_duration_seconds', 'Time from a step starting to its end, retries and backoff included.', ['chain', 'tool'], STEP_DURATION_BUCKETS, registry);
  const calls: CounterType<'tool' | 'status'> = new Counter({
    name: 'toolchain_tool_calls_total',
    help: 'Tool calls by tool and status (ok, error); retries count once per attempt.',
    labelNames: ['tool', 'status'] as const,
    registers: [registry],
    collect: () => callCells.flush(calls),
  });
  const inFlight = new Gauge({ name: 'toolchain_runs_in_flight', help: 'Runs started and not finished (sub-chains not counted).', registers: [registry] });
  const circuit = new Gauge({ name: 'toolchain_circuit_open', help: '1 while calls of the tool fail fast with CIRCUIT_OPEN, else 0.', labelNames: ['tool'] as const, registers: [registry] });

  const byChain = new Map<string, ChainChildren>();
  const circuitOpen = new Set<string>();

  function children(e: { readonly chain: string; readonly index: number; readonly phase?: HandlerPhase | undefined; readonly step: string }): StepChildren | undefined {
    const plan = plans.chain(e.chain);
    if (plan === undefined) return undefined;
    let entry = byChain.get(e.chain);
    if (entry === undefined || entry.plan !== plan) {
      entry = { plan, steps: [], handlers: new Map() };
      byChain.set(e.chain, entry);
    }
    if (e.phase === undefined) return (entry.steps[e.index] ??= makeChildren(e.chain, plan.steps[e.index]));
    const key = e.phase === 'compensate' ? `${e.phase} ${e.step}` : `${e.phase} ${e.index}`;
    let c = entry.handlers.get(key);
    if (c === undefined) entry.handlers.set(key, (c = makeChildren(e.chain, eventStep(plan, e.phase, e.index, e.step))));
    return c;
  }

  function makeChildren(chain: string, step: PlanStep | undefined): StepChildren {
    const tool = toolLabel(step);
    const name = step?.name ?? 'unknown';
    const callsTool = step?.target.kind === 'tool';
    return {
      tool,
      succeeded: stepCells.cell({ chain, step: name, tool, status: 'succeeded' }),
      failed: stepCells.cell({ chain, step: name, tool, status: 'failed' }),
      skipped: stepCells.cell({ chain, step: name, tool, status: 'skipped' }),
      duration: duration.labels(chain, tool),
      callOk: callsTool ? callCells.cell({ tool, status: 'ok' }) : undefined,
      callError: callsTool ? callCells.cell({ tool, status: 'error' }) : undefined,
    };
  }

  function setCircuit(tool: string, open: boolean): void {
    // Only changes reach the gauge: a closed circuit stays unset until it first opens.
    if (open === circuitOpen.has(tool)) return;
    if (open) circuitOpen.add(tool);
    else circuitOpen.delete(tool);
    circuit.labels(tool).set(open ? 1 : 0);
  }

  function noteError(c: StepChildren, code: string): void {
    if (NOT_CALLED.has(code) || c.callError === undefined) return;
    c.callError.pending++;
    if (code === 'CIRCUIT_OPEN') setCircuit(c.tool, true);
  }

  function onEvent(e: RunEvent): void {
    switch (e.type) {
      case 'run:started':
        if (e.parent === undefined) inFlight.inc();
        return;
      case 'run:waiting':
        // Parked: no longer in flight here; woken, it starts again (run:started).
        if (e.parent === undefined) inFlight.dec();
        return;
      case 'run:finished':
        if (e.parent !== undefined) return;
        inFlight.dec();
        if (e.error !== undefined && REFUSED.has(e.error.code)) return;
        runs.labels(e.chain, e.status).inc();
        return;
      case 'step:started':
        return;
      case 'step:retrying': {
        const c = children(e);
        if (c) noteError(c, e.error.code);
        return;
      }
      case 'step:succeeded': {
        const c = children(e);
        if (!c) return;
        c.succeeded.pending++;
        c.duration.observe(e.duration_ms / 1000);
        if (e.fallback === 'output') {
          // The fixed output answers after the last call failed, without a step:retrying for it.
          if (c.callError) c.callError.pending++;
        } else if (e.fallback === 'tool') {
          const fallback = eventStep(plans.chain(e.chain), e.phase, e.index, e.step)?.fallback;
          const fallbackTool = fallback?.kind === 'tool' ? fallback.tool : undefined;
          if (fallbackTool !== undefined) callCells.cell({ tool: fallbackTool, status: 'ok' }).pending++;
        } else if (c.callOk) {
          c.callOk.pending++;
          if (e.fallback === undefined && circuitOpen.size > 0) setCircuit(c.tool, false);
        }
        return;
      }
      case 'step:failed': {
        if (e.phase !== undefined && e.call === undefined) handlerFailures.labels(e.chain, e.phase).inc();
        const c = children(e);
        if (!c) return;
        c.failed.pending++;
        c.duration.observe(e.duration_ms / 1000);
        if (e.attempts > 0) noteError(c, e.error.code);
        return;
      }
      case 'step:skipped': {
        const c = children(e);
        if (c) c.skipped.pending++;
        return;
      }
      case 'agent:tool_call':
        // A chain the model called is no tool call; its own steps are counted as they run.
        if (e.target?.kind !== 'chain') callCells.cell({ tool: e.target?.name ?? e.name, status: e.is_error ? 'error' : 'ok' }).pending++;
        return;
      case 'agent:turn':
        return;
    }
  }

  return { registry, onEvent, text: () => registry.metrics(), contentType: registry.contentType };
}
