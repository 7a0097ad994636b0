import type { ChainPlan } from '../compiler/plan.js';
import type { HandlerPhase } from '../run-model/result.js';
import { eventStep } from '../compiler/handler-phase.js';
import { COMPENSATE_SUFFIX } from '../compiler/compile-handlers.js';
import type { RunEvent } from '../run-model/events.js';
import type { AttemptRecord, RunDetail, RunStatus, RunSummary, StepDetail } from './run-service.js';

// A run as the inspector and `runs show` see it, folded from its events one at a time. The
// events say when attempt 1 started (step:started), when each attempt failed and how long the
// wait before the next was (step:retrying), and how the step ended: that is enough for a
// timeline of every attempt without the executor having to announce each one. A repeat step's
// rounds (step:round) become rows of their own, keyed `STEP#N` as the store keys them.

interface MutableStep {
  status: StepDetail['status'];
  attempts: number;
  duration_ms: number;
  started_at?: number;
  output?: unknown;
  error?: { code: string; message: string };
  skip_reason?: 'when' | 'dependency';
  /** Index in its own chain's plan (or in its handler list), for resolving its input. */
  index: number;
  /** The part of failure handling it belongs to, if any. */
  phase?: HandlerPhase;
  /** The run (top-level or sub-chain) the step belongs to. */
  run_id: string;
  timeline: AttemptRecord[];
  /** Attempts made in earlier executions of the run (before a resume ran the step again). */
  base: number;
}

export class RunView {
  status: RunStatus = 'running';
  /** The run's start: when its executor began it (a resumed run: its first start, from the store). */
  started_at: number;
  finished_at: number | undefined;
  duration_ms: number | undefined;
  outputs: unknown = null;
  error: RunDetail['error'];
  /** Set by the service when the run was cancelled through it. */
  cancelRequested = false;
  /** While it waits: on what, and until when. */
  private waits: RunSummary['waiting_for'];
  private wakeAt: number | null | undefined;
  /** Running, with its owner gone (a stored run): it ended, unfinished, this long after its start. */
  private interruptedMs: number | undefined;
  /** Its first run:started was seen; a woken run starts again with each wake. */
  private begun = false;
  /** It waited and was woken: its time counts from its first start. */
  private woken = false;
  /** When the run was resumed, oldest first. */
  private readonly resumes: number[] = [];
  private readonly steps = new Map<string, MutableStep>();
  /** Key prefix of each sub-chain run (`first›`); '' for the run itself. */
  private readonly prefixes = new Map<string, string>();
  /** Run context of each run (inputs and step outputs), for resolving step inputs on demand. */
  private readonly contexts = new Map<string, { plan: ChainPlan | undefined; ctx: Record<string, unknown> }>();

  constructor(
    readonly run_id: string,
    readonly chain: string,
    readonly input: unknown,
    started_at: number,
    private readonly planOf: (chain: string) => ChainPlan | undefined,
  ) {
    this.started_at = started_at;
    this.prefixes.set(run_id, '');
    const plan = planOf(chain);
    this.contexts.set(run_id, { plan, ctx: inputContext(input, plan) });
    for (const step of plan?.steps ?? []) this.steps.set(step.name, blankStep(step.index, run_id));
  }

  apply(e: RunEvent): void {
    if (e.type === 'run:started') {
      if (e.parent === undefined) {
        // The view is made before the run is created in the store; the run began here.
        if (this.resumes.length === 0 && !this.begun) this.started_at = e.timestamp;
        this.begun = true;
        return;
      }
      const prefix = `${this.prefixes.get(e.parent.run_id) ?? ''}${e.parent.step}›`;
      this.prefixes.set(e.run_id, prefix);
      const plan = this.planOf(e.chain);
      this.contexts.set(e.run_id, { plan, ctx: inputContext(e.input, plan) });
      return;
    }
    if (e.type === 'run:finished') {
      if (e.parent !== undefined) return;
      this.finished_at = e.timestamp;
      // A resumed run's time counts from its first start, not from the last resume.
      this.duration_ms = this.resumes.length > 0 || this.woken ? Math.max(0, e.timestamp - this.started_at) : e.duration_ms;
      this.outputs = e.outputs;
      this.error = e.error;
      // A cancel that came while the run's failure handling ran was not heard: it ended as it ended.
      this.status = e.status === 'failed' && this.cancelRequested && e.error?.code === 'ABORTED' ? 'cancelled' : e.status;
      return;
    }
    if (e.type === 'run:waiting') {
      if (e.parent !== undefined) return;
      this.status = 'waiting';
      this.waits = e.waits;
      this.wakeAt = e.wake_at;
      return;
    }
    if (e.type === 'run:woken') {
      if (e.parent !== undefined) return;
      this.status = 'running';
      this.woken = true;
      this.waits = undefined;
      return;
    }
    if (e.type === 'agent:turn' || e.type === 'agent:tool_call' || e.type === 'approval:requested' || e.type === 'approval:decided') return;
    const key = `${this.prefixes.get(e.run_id) ?? ''}${e.step}`;
    let step = this.steps.get(key);
    if (step === undefined) this.steps.set(key, (step = blankStep(e.index, e.run_id)));
    if (e.phase !== undefined) step.phase = e.phase;
    const last = step.timeline[step.timeline.length - 1];
    switch (e.type) {
      case 'step:started':
        // A step that ended before and starts again runs in a resumed execution: its earlier attempts stay.
        // (An agent's calls of one tool share a key, each call a start of its own: not that.)
        // A step that waited and goes on is the same attempt, taken up again: a bar of its own, no new attempt.
        if (step.status !== 'pending' && step.status !== 'running' && step.status !== 'waiting' && e.call === undefined) {
          step.base = step.attempts;
          delete step.error;
          delete step.skip_reason;
        }
        if (step.status === 'waiting') {
          // Its wait lasted until now.
          const waited = step.timeline.findLastIndex((a) => a.status === 'waiting');
          if (waited >= 0) step.timeline[waited] = { ...step.timeline[waited]!, duration_ms: Math.max(0, e.timestamp - step.timeline[waited]!.started_at) };
        }
        step.status = 'running';
        step.started_at = e.timestamp;
        step.attempts = step.base + 1;
        step.timeline.push({ attempt: step.base + 1, started_at: e.timestamp, status: 'running' });
        return;
      case 'step:retrying':
        if (last && last.status === 'running' && e.item === undefined) {
          step.timeline[step.timeline.length - 1] = { ...last, status: 'failed', duration_ms: e.duration_ms, error: e.error };
          step.timeline.push({ attempt: step.base + e.attempt + 1, started_at: e.timestamp + e.delay_ms, status: 'running', ...(e.fallback ? { fallback: e.fallback } : {}) });
          step.attempts = Math.max(step.attempts, step.base + e.attempt + 1);
        } else if (e.item !== undefined) {
          // A for_each element failed an attempt: shown as a failed sliver inside the step's bar.
          step.timeline.push({ attempt: step.base + e.attempt, started_at: e.timestamp - e.duration_ms, duration_ms: e.duration_ms, status: 'failed', error: e.error, item: e.item });
        }
        return;
      case 'step:succeeded':
      case 'step:failed': {
        step.status = e.status;
        step.attempts = step.base + e.attempts;
        step.duration_ms = e.duration_ms;
        step.started_at ??= e.started_at;
        if (e.type === 'step:succeeded') step.output = e.output;
        else {
          step.error = e.error;
          if (e.output !== undefined) step.output = e.output;
        }
        const open = step.timeline.findLastIndex((a) => a.status === 'running');
        const fallback = e.type === 'step:succeeded' ? e.fallback : undefined;
        if (open >= 0) {
          const a = step.timeline[open]!;
          const duration_ms = Math.max(0, e.timestamp - a.started_at);
          if (fallback !== undefined && a.fallback === undefined) {
            // A fixed-output fallback comes without a step:retrying: the open attempt failed, then the fallback answered.
            step.timeline[open] = { ...a, status: 'failed', duration_ms };
            step.timeline.push({ attempt: a.attempt + 1, started_at: e.timestamp, duration_ms: 0, status: 'succeeded', fallback });
          } else {
            step.timeline[open] = { ...a, status: e.status, duration_ms, ...(e.type === 'step:failed' ? { error: e.error } : {}) };
          }
        }
        if (e.type === 'step:succeeded' && e.output !== undefined) {
          const run = this.contexts.get(e.run_id);
          if (run) run.ctx[e.step] = e.output;
        } else if (e.type === 'step:failed' && e.output !== undefined) {
          const run = this.contexts.get(e.run_id);
          if (run) run.ctx[e.step] = e.output;
        }
        return;
      }
      case 'step:waiting': {
        step.status = 'waiting';
        const open = step.timeline.findLastIndex((a) => a.status === 'running');
        if (open >= 0) step.timeline[open] = { ...step.timeline[open]!, status: 'waiting', duration_ms: Math.max(0, e.timestamp - step.timeline[open]!.started_at) };
        return;
      }
      case 'step:round':
        // A repeat's round: a row of its own under the step (`STEP#N`), as `runs show` keys it.
        this.steps.set(`${key}#${e.round}`, {
          status: 'succeeded',
          attempts: e.attempts,
          duration_ms: e.duration_ms,
          started_at: e.started_at,
          output: e.output,
          index: e.index,
          run_id: e.run_id,
          timeline: [{ attempt: e.attempts, started_at: e.started_at, duration_ms: e.duration_ms, status: 'succeeded' }],
          base: 0,
        });
        return;
      case 'step:skipped':
        step.status = 'skipped';
        step.skip_reason = e.reason;
        step.started_at = e.timestamp;
        return;
    }
  }

  /** The run was taken up again at `at` (a resume): marked on the timeline; its time counts from its first start. */
  resumedAt(at: number): void {
    if (!this.resumes.includes(at)) this.resumes.push(at), this.resumes.sort((a, b) => a - b);
  }

  /** A stored run whose owner is gone: its steps at work are interrupted, its time stopped `ms` after its start. */
  interruptedAfter(ms: number): void {
    this.interruptedMs = ms;
  }

  summary(): RunSummary {
    const interrupted = this.status === 'running' && this.interruptedMs !== undefined;
    const duration = this.duration_ms ?? (interrupted ? this.interruptedMs : undefined);
    return {
      run_id: this.run_id,
      chain: this.chain,
      status: this.status,
      started_at: this.started_at,
      ...(this.finished_at !== undefined ? { finished_at: this.finished_at } : {}),
      ...(duration !== undefined ? { duration_ms: duration } : {}),
      interrupted,
      ...(this.error !== undefined && this.status !== 'waiting' ? { error: this.error } : {}),
      ...(this.status === 'waiting' && this.waits !== undefined ? { waiting_for: this.waits, wake_at: this.wakeAt ?? null } : {}),
    };
  }

  detail(): RunDetail {
    const summary = this.summary();
    const steps: Record<string, StepDetail> = {};
    for (const [key, s] of this.steps) {
      const input = s.status === 'pending' || s.status === 'skipped' ? undefined : this.resolveInput(s, key.slice(key.lastIndexOf('›') + 1));
      steps[key] = {
        status: s.status === 'running' && summary.interrupted ? 'interrupted' : s.status,
        attempts: s.attempts,
        duration_ms: s.duration_ms,
        ...(s.started_at !== undefined ? { started_at: s.started_at } : {}),
        ...(s.output !== undefined ? { output: s.output } : {}),
        ...(s.error !== undefined ? { error: s.error } : {}),
        ...(input !== undefined ? { input } : {}),
        ...(s.skip_reason !== undefined ? { skip_reason: s.skip_reason } : {}),
        ...(s.phase !== undefined ? { phase: s.phase } : {}),
        timeline: s.timeline,
      };
    }
    return { ...summary, input: this.input, outputs: this.outputs, steps, resumes: [...this.resumes] };
  }

  /** The step's input_map against its run's context (inputs and earlier outputs); for_each steps show their list. */
  private resolveInput(s: MutableStep, name: string): unknown {
    const run = this.contexts.get(s.run_id);
    const step = eventStep(run?.plan, s.phase, s.index, name);
    if (!run || !step) return undefined;
    try {
      const ctx = s.phase === undefined ? run.ctx : this.handlerScope(run, s.phase, name);
      if (step.forEach) return { for_each: step.forEach.items.source, items: step.forEach.items.get(ctx) };
      return step.input.get(ctx);
    } catch {
      return undefined;
    }
  }

  /** What a handler's step reads besides the run's context: `error`, `status`, and a compensation's `this` and `this_input`. */
  private handlerScope(run: { plan: ChainPlan | undefined; ctx: Record<string, unknown> }, phase: HandlerPhase, name: string): Record<string, unknown> {
    const scope = Object.create(run.ctx) as Record<string, unknown>;
    if (this.error !== undefined) scope.error = { code: this.error.code, message: this.error.message, ...(this.error.step !== undefined ? { step: this.error.step } : {}) };
    if (phase === 'finally') scope.status = this.status;
    if (phase === 'compensate') {
      const of = name.slice(0, -COMPENSATE_SUFFIX.length);
      scope.this = run.ctx[of];
      const step = run.plan?.steps.find((p) => p.name === of);
      try {
        if (step !== undefined && step.forEach === undefined) scope.this_input = step.input.get(run.ctx);
      } catch {
        // left out, as it would be in the run
      }
    }
    return scope;
  }
}

function blankStep(index: number, run_id: string): MutableStep {
  return { status: 'pending', attempts: 0, duration_ms: 0, index, run_id, timeline: [], base: 0 };
}

/** The run's inputs with their declared defaults, as the run's steps saw them. */
function inputContext(input: unknown, plan: ChainPlan | undefined): Record<string, unknown> {
  const ctx = Object.create(null) as Record<string, unknown>;
  const properties = (plan?.inputs.schema.properties ?? {}) as Record<string, { default?: unknown }>;
  for (const [name, schema] of Object.entries(properties)) if (schema.default !== undefined) ctx[name] = schema.default;
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) Object.assign(ctx, input);
  return ctx;
}
