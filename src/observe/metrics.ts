import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PlanStep } from '../compiler/plan.js';
import type { RunEvent } from '../executor/events.js';
import { NOT_CALLED, isCancellation, toolLabel, type PlanSource } from './plan-source.js';

// SPEC §8 metrics, computed from run events by one consumer. Each engine or server has its own
// prom-client Registry (never the global default), so embedded engines and tests do not collide.
// The hot path does no label hashing: the labelled children of each (chain, step) are looked up
// once per plan and kept.

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
  readonly succeeded: Counter.Internal;
  readonly failed: Counter.Internal;
  readonly skipped: Counter.Internal;
  readonly duration: Histogram.Internal<'chain' | 'tool'> | undefined;
  readonly callOk: Counter.Internal | undefined;
  readonly callError: Counter.Internal | undefined;
}

interface ChainChildren {
  readonly plan: object;
  readonly steps: StepChildren[];
}

export function createRunMetrics(plans: PlanSource, registry: Registry = new Registry()): RunMetrics {
  const runs = new Counter({ name: 'toolchain_runs_total', help: 'Runs finished, by chain and status (succeeded, failed, cancelled).', labelNames: ['chain', 'status'] as const, registers: [registry] });
  const steps = new Counter({ name: 'toolchain_steps_total', help: 'Steps finished, by chain, step, tool and status (succeeded, failed, skipped).', labelNames: ['chain', 'step', 'tool', 'status'] as const, registers: [registry] });
  const duration = new Histogram({ name: 'toolchain_step_duration_seconds', help: 'Time from a step starting to its end, retries and backoff included.', labelNames: ['chain', 'tool'] as const, buckets: [...STEP_DURATION_BUCKETS], registers: [registry] });
  const calls = new Counter({ name: 'toolchain_tool_calls_total', help: 'Tool calls by tool and status (ok, error); retries count once per attempt.', labelNames: ['tool', 'status'] as const, registers: [registry] });
  const inFlight = new Gauge({ name: 'toolchain_runs_in_flight', help: 'Runs started and not finished (sub-chains not counted).', registers: [registry] });
  const circuit = new Gauge({ name: 'toolchain_circuit_open', help: '1 while calls of the tool fail fast with CIRCUIT_OPEN, else 0.', labelNames: ['tool'] as const, registers: [registry] });

  const byChain = new Map<string, ChainChildren>();

  function children(chain: string, index: number): StepChildren | undefined {
    const plan = plans.chain(chain);
    if (plan === undefined) return undefined;
    let entry = byChain.get(chain);
    if (entry === undefined || entry.plan !== plan) {
      entry = { plan, steps: [] };
      byChain.set(chain, entry);
    }
    return (entry.steps[index] ??= makeChildren(chain, plan.steps[index]));
  }

  function makeChildren(chain: string, step: PlanStep | undefined): StepChildren {
    const tool = toolLabel(step);
    const name = step?.name ?? 'unknown';
    const callsTool = step?.kind === 'tool';
    return {
      tool,
      succeeded: steps.labels(chain, name, tool, 'succeeded'),
      failed: steps.labels(chain, name, tool, 'failed'),
      skipped: steps.labels(chain, name, tool, 'skipped'),
      duration: duration.labels(chain, tool),
      callOk: callsTool ? calls.labels(tool, 'ok') : undefined,
      callError: callsTool ? calls.labels(tool, 'error') : undefined,
    };
  }

  function noteError(c: StepChildren, code: string): void {
    if (NOT_CALLED.has(code)) return;
    c.callError?.inc();
    if (code === 'CIRCUIT_OPEN') circuit.labels(c.tool).set(1);
  }

  function onEvent(e: RunEvent): void {
    switch (e.type) {
      case 'run:started':
        if (e.parent === undefined) inFlight.inc();
        return;
      case 'run:finished':
        if (e.parent !== undefined) return;
        inFlight.dec();
        runs.labels(e.chain, e.status === 'failed' && isCancellation(e.error) ? 'cancelled' : e.status).inc();
        return;
      case 'step:started':
        return;
      case 'step:retrying': {
        const c = children(e.chain, e.index);
        if (c) noteError(c, e.error.code);
        return;
      }
      case 'step:succeeded': {
        const c = children(e.chain, e.index);
        if (!c) return;
        c.succeeded.inc();
        c.duration?.observe(e.duration_ms / 1000);
        if (e.fallback === 'output') {
          // The fixed output answers after the last call failed, without a step:retrying for it.
          c.callError?.inc();
        } else if (e.fallback === 'tool') {
          const fallbackTool = plans.chain(e.chain)?.steps[e.index]?.fallback?.tool;
          if (fallbackTool !== undefined) calls.labels(fallbackTool, 'ok').inc();
        } else if (c.callOk) {
          c.callOk.inc();
          if (e.fallback === undefined) circuit.labels(c.tool).set(0);
        }
        return;
      }
      case 'step:failed': {
        const c = children(e.chain, e.index);
        if (!c) return;
        c.failed.inc();
        c.duration?.observe(e.duration_ms / 1000);
        if (e.attempts > 0) noteError(c, e.error.code);
        return;
      }
      case 'step:skipped':
        children(e.chain, e.index)?.skipped.inc();
        return;
      case 'agent:tool_call':
        // A chain the model called is no tool call; its own steps are counted as they run.
        if (e.target?.kind !== 'chain') calls.labels(e.target?.name ?? e.name, e.is_error ? 'error' : 'ok').inc();
        return;
      case 'agent:turn':
        return;
    }
  }

  return { registry, onEvent, text: () => registry.metrics(), contentType: registry.contentType };
}
