import type { ChainPlan, PlanStep } from '../compiler/plan.js';
import { ToolchainError, type DiagnosticCode } from '../common/errors.js';
import type { ApproveCallback, ToolSet } from '../registry/types.js';
import type { Abortable, AttemptContext, AttemptOwner } from './attempt-context.js';
import type { AttemptSink } from './attempt.js';
import { bindTools, type BoundPlan } from './bind-tools.js';
import type { Clock, TimerHandle } from '../common/clock.js';
import type { EventListener, FallbackKind, ParentRef, RunError, RunEvent } from './events.js';
import { startStep } from './start-step.js';
import { checkRunInput } from './run-inputs.js';
import type { StepError } from './step-error.js';
import { advance, FAILED, PENDING, RUNNING, SKIPPED, STATUS_NAMES, SUCCEEDED } from './step-state.js';
import type { ExecutorHost, RunOptions, RunResult, StepSummary } from './types.js';

// One run of one plan: the scheduler and the run's state. The plan is only walked: per run there
// are a handful of arrays sized by the step count, and a step starts the moment its last
// dependency finishes (a counter per step reaches zero). Everything that changes a step's status
// is in this file; what one step does between starting and finishing is in start-step.ts.

/**
 * Per plan, computed once: the arrays every run starts from, copied with `slice()`. Plain arrays
 * rather than typed ones: on Node 20 a small Float64Array costs ~400 ns to allocate, a slice of a
 * plain array ~15 ns. `doubles` is created holding a fraction so its copies keep V8's double
 * element kind and storing a timestamp never converts them.
 */
interface PlanArrays {
  readonly waitCounts: number[];
  readonly zeros: number[];
  readonly doubles: number[];
}

const planArrays = new WeakMap<ChainPlan, PlanArrays>();

function arraysOf(plan: ChainPlan): PlanArrays {
  let arrays = planArrays.get(plan);
  if (!arrays) {
    const n = plan.steps.length;
    const doubles = new Array<number>(n).fill(0.5);
    doubles.fill(0);
    arrays = { waitCounts: plan.steps.map((s) => s.waitsFor.length), zeros: new Array<number>(n).fill(0), doubles };
    planArrays.set(plan, arrays);
  }
  return arrays;
}

function positiveLimit(value: number | undefined): number {
  return value === undefined ? Infinity : value;
}

export class Run implements AttemptOwner, AttemptSink {
  readonly id: string;
  readonly plan: ChainPlan;
  readonly steps: readonly PlanStep[];
  readonly host: ExecutorHost;
  readonly clock: Clock;
  readonly approve: ApproveCallback | undefined;
  readonly onEvent: EventListener | undefined;
  readonly options: RunOptions;
  readonly parent: ParentRef | undefined;
  /** The run context of SPEC §2.3: inputs, then each finished step's output by name. */
  ctx: Record<string, unknown> = {};
  bound!: BoundPlan;
  readonly status: number[];
  /** What each running step can be cancelled through (its attempt, or its for_each group). */
  readonly controls: (Abortable | undefined)[];
  /** True once the run stops starting steps: a step failed, the caller aborted, or the deadline passed. */
  stopping = false;

  private readonly remaining: number[];
  private readonly attempts: number[];
  private readonly startedAt: number[];
  private readonly durations: number[];
  private errors: (StepError | undefined)[] | undefined;
  private holdsSlot: number[] | undefined;
  private readonly ready: number[] = [];
  private head = 0;
  private running = 0;
  private readonly limit: number;
  private pumping = false;
  private spareSlot = false;
  private waitingForSlot = false;
  private done = false;
  private runError: RunError | undefined;
  private readonly started: number;
  private deadline: TimerHandle | undefined;
  private callerAbort: (() => void) | undefined;
  private resolve!: (result: RunResult) => void;

  constructor(host: ExecutorHost, plan: ChainPlan, options: RunOptions, parent: ParentRef | undefined) {
    this.id = host.newRunId();
    this.plan = plan;
    this.steps = plan.steps;
    this.host = host;
    this.clock = host.clock;
    this.options = options;
    this.approve = options.approve;
    this.onEvent = options.onEvent;
    this.parent = parent;
    const arrays = arraysOf(plan);
    this.status = arrays.zeros.slice();
    this.controls = new Array<Abortable | undefined>(arrays.zeros.length);
    this.remaining = arrays.waitCounts.slice();
    this.attempts = arrays.zeros.slice();
    this.startedAt = arrays.doubles.slice();
    this.durations = arrays.doubles.slice();
    this.limit = Math.min(positiveLimit(plan.concurrency), positiveLimit(options.concurrency));
    this.started = host.clock.now();
  }

  /** Validates the input, binds the tools and starts the roots; resolves when the run has finished. */
  start(tools: ToolSet, input: unknown): Promise<RunResult> {
    const promise = new Promise<RunResult>((resolve) => {
      this.resolve = resolve;
    });
    if (this.onEvent) this.emit({ type: 'run:started', run_id: this.id, chain: this.plan.name, timestamp: this.started, parent: this.parent, input });
    const checked = checkRunInput(this.plan, input, this.host.schemas);
    if (!checked.ok) return this.endEarly('INPUT_INVALID', checked.message), promise;
    const bound = bindTools(this.plan, tools);
    if (bound instanceof ToolchainError) return this.endEarly(bound.code, bound.message), promise;
    this.bound = bound;
    const signal = this.options.signal;
    if (signal?.aborted) return this.endEarly('ABORTED', 'the run was cancelled before it started'), promise;
    // A null-prototype object: `$.constructor` or `$.toString` can never reach Object.prototype,
    // and V8 keeps it a hash table, so adding each step's output by name costs no hidden-class
    // transition (on a plain object those adds showed up as ~25% of a step's time in profiles).
    this.ctx = Object.assign(Object.create(null) as Record<string, unknown>, checked.input);
    if (this.plan.timeoutMs !== undefined) {
      const ms = this.plan.timeoutMs;
      this.deadline = this.clock.setTimeout(() => {
        this.deadline = undefined;
        this.stop({ code: 'RUN_TIMEOUT', message: `the run of chain '${this.plan.name}' exceeded its timeout of ${ms} ms` }, 'RUN_TIMEOUT');
      }, ms);
    }
    if (signal) {
      this.callerAbort = () => this.stop({ code: 'ABORTED', message: 'the run was cancelled by its caller' }, 'ABORTED');
      signal.addEventListener('abort', this.callerAbort, { once: true });
    }
    for (const root of this.plan.roots) this.ready.push(root);
    this.pump();
    return promise;
  }

  // ---------------------------------------------------------------------------------------------
  // Scheduling

  /** Starts every ready step the limits allow. Re-entrant calls (a step finishing synchronously) fall through to the running loop. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    const { ready, steps } = this;
    const slots = this.host.slots;
    while (this.head < ready.length && !this.stopping) {
      const i = ready[this.head]!;
      const step = steps[i]!;
      let skip: 'when' | 'dependency' | undefined;
      try {
        skip = this.skipReason(step);
      } catch (error) {
        this.head++;
        this.running++;
        this.beginStep(i, step);
        this.failStep(i, { code: 'VALIDATION_FAILED', message: `step '${step.name}': its 'when' could not be evaluated: ${(error as Error).message}` }, 0);
        continue;
      }
      if (skip !== undefined) {
        this.head++;
        this.skipStep(i, step, skip);
        continue;
      }
      if (this.running >= this.limit) break;
      // Sub-chain steps only wait for their own steps, which take slots: if they held one too,
      // nested chains could exhaust the pool and wait on each other forever.
      if (slots !== undefined && step.kind === 'tool') {
        if (this.spareSlot) this.spareSlot = false;
        else if (!slots.tryAcquire()) {
          if (!this.waitingForSlot) {
            this.waitingForSlot = true;
            slots.wait(() => this.slotHandedOver());
          }
          break;
        }
        (this.holdsSlot ??= arraysOf(this.plan).zeros.slice())[i] = 1;
      }
      this.head++;
      this.running++;
      this.beginStep(i, step);
      startStep(this, i);
    }
    if (this.head === ready.length) {
      ready.length = 0;
      this.head = 0;
    }
    if (this.spareSlot && (this.stopping || ready.length === 0)) {
      this.spareSlot = false;
      slots!.release();
    }
    this.pumping = false;
    if (!this.stopping && this.running === 0 && ready.length === 0) this.finish();
  }

  private slotHandedOver(): void {
    this.waitingForSlot = false;
    if (this.done || this.stopping) {
      this.host.slots!.release();
      return;
    }
    this.spareSlot = true;
    this.pump();
  }

  /** SPEC §2.5: a step's own `when` alone decides; without one, a skipped step it reads or depends on skips it. */
  private skipReason(step: PlanStep): 'when' | 'dependency' | undefined {
    if (step.when !== undefined) return step.when.test(this.ctx) ? undefined : 'when';
    const skipsWith = step.skipsWith;
    for (let k = 0; k < skipsWith.length; k++) if (this.status[skipsWith[k]!] === SKIPPED) return 'dependency';
    return undefined;
  }

  private beginStep(i: number, step: PlanStep): void {
    advance(this.status, i, RUNNING);
    const now = this.clock.now();
    this.startedAt[i] = now;
    if (this.onEvent) this.emit({ type: 'step:started', run_id: this.id, chain: this.plan.name, timestamp: now, parent: this.parent, step: step.name, index: i, attempt: 1 });
  }

  /** A step's work is finished: free its slot and release the steps that were waiting for it. */
  private settle(i: number): void {
    this.controls[i] = undefined;
    this.releaseSlot(i);
    this.running--;
    const dependents = this.steps[i]!.dependents;
    for (let k = 0; k < dependents.length; k++) {
      const d = dependents[k]!;
      const left = this.remaining[d]! - 1;
      this.remaining[d] = left;
      if (left === 0) this.ready.push(d);
    }
    this.pump();
  }

  // ---------------------------------------------------------------------------------------------
  // Transitions

  /** True while step `i` is running in a run that has not stopped: a late result from an aborted attempt is dropped. */
  isLive(i: number): boolean {
    return this.status[i] === RUNNING && !this.stopping;
  }

  succeedStep(i: number, output: unknown, attempts: number, fallback?: FallbackKind): void {
    if (!this.isLive(i)) return;
    const step = this.steps[i]!;
    advance(this.status, i, SUCCEEDED);
    this.ctx[step.name] = output;
    const now = this.clock.now();
    this.attempts[i] = attempts;
    const duration = (this.durations[i] = now - this.startedAt[i]!);
    if (this.onEvent) {
      // Literals with every key present (no spreads): one object shape per event type keeps
      // building them cheap; absent optional fields are undefined, which JSON leaves out.
      this.emit({
        type: 'step:succeeded',
        run_id: this.id,
        chain: this.plan.name,
        timestamp: now,
        parent: this.parent,
        step: step.name,
        index: i,
        status: 'succeeded',
        attempt: attempts,
        attempts,
        output,
        error: undefined,
        started_at: this.startedAt[i]!,
        duration_ms: duration,
        fallback,
      });
    }
    this.settle(i);
  }

  failStep(i: number, error: StepError, attempts: number): void {
    if (!this.isLive(i)) return;
    const step = this.steps[i]!;
    advance(this.status, i, FAILED);
    (this.errors ??= [])[i] = error;
    const now = this.clock.now();
    this.attempts[i] = attempts;
    const duration = (this.durations[i] = now - this.startedAt[i]!);
    const output = step.onError === 'continue' ? { error: { code: error.code, message: error.message } } : undefined;
    if (output !== undefined) this.ctx[step.name] = output;
    if (this.onEvent) {
      this.emit({
        type: 'step:failed',
        run_id: this.id, chain: this.plan.name, timestamp: now, parent: this.parent,
        step: step.name,
        index: i,
        status: 'failed',
        attempt: attempts,
        attempts,
        error,
        output,
        started_at: this.startedAt[i]!,
        duration_ms: duration,
      });
    }
    if (output !== undefined) return this.settle(i);
    this.controls[i] = undefined;
    this.releaseSlot(i);
    this.stop({ ...error, step: step.name }, 'ABORTED', `step '${step.name}' failed`);
  }

  private skipStep(i: number, step: PlanStep, reason: 'when' | 'dependency'): void {
    advance(this.status, i, SKIPPED);
    const now = this.clock.now();
    this.startedAt[i] = now;
    if (this.onEvent) {
      this.emit({
        type: 'step:skipped',
        run_id: this.id, chain: this.plan.name, timestamp: now, parent: this.parent,
        step: step.name,
        index: i,
        status: 'skipped',
        attempt: 0,
        attempts: 0,
        reason,
        started_at: now,
        duration_ms: 0,
      });
    }
    // A skipped step never held a slot or counted as running: only release its dependents.
    this.running++;
    this.settle(i);
  }

  /**
   * Ends the run early: nothing new starts, every running step is aborted through its signal and
   * recorded as failed with `abortCode`, and the run finishes at once. It does not wait for aborted
   * tools to return: a tool that ignores its signal cannot hold the run (its late result is dropped).
   */
  stop(error: RunError, abortCode: DiagnosticCode, why?: string): void {
    if (this.stopping || this.done) return;
    this.stopping = true;
    this.runError = error;
    const message = why ? `aborted because ${why}` : error.message;
    const reason = new ToolchainError(abortCode, message);
    const now = this.clock.now();
    for (let i = 0; i < this.status.length; i++) {
      if (this.status[i] !== RUNNING) continue;
      this.controls[i]?.abort(reason);
      this.controls[i] = undefined;
      advance(this.status, i, FAILED);
      const stepError: StepError = { code: abortCode, message };
      (this.errors ??= [])[i] = stepError;
      const duration = (this.durations[i] = now - this.startedAt[i]!);
      this.releaseSlot(i);
      if (this.onEvent) {
        this.emit({
          type: 'step:failed',
          run_id: this.id, chain: this.plan.name, timestamp: now, parent: this.parent,
          step: this.steps[i]!.name,
          index: i,
          status: 'failed',
          attempt: Math.max(1, this.attempts[i]!),
          attempts: this.attempts[i]!,
          error: stepError,
          started_at: this.startedAt[i]!,
          duration_ms: duration,
        });
      }
    }
    this.running = 0;
    this.finish();
  }

  private releaseSlot(i: number): void {
    if (this.holdsSlot?.[i] === 1) {
      this.holdsSlot[i] = 0;
      this.host.slots!.release();
    }
  }

  /** Runs a sub-chain's plan as a child of this run: same engine, same tools, same listener and approver. */
  runChild(plan: ChainPlan, input: unknown, signal: AbortSignal, step: string): Promise<RunResult> {
    const options: RunOptions = {
      signal,
      ...(this.onEvent !== undefined ? { onEvent: this.onEvent } : {}),
      ...(this.approve !== undefined ? { approve: this.approve } : {}),
      ...(this.options.concurrency !== undefined ? { concurrency: this.options.concurrency } : {}),
    };
    return new Run(this.host, plan, options, { run_id: this.id, step }).start(this.bound.tools, input);
  }

  // The run is the sink of a plain step's attempts, keyed by step index (see attempt.ts).
  track(ctx: AttemptContext, i: number): void {
    this.controls[i] = ctx;
    this.attempts[i] = ctx.attempt;
  }

  live(i: number): boolean {
    return this.isLive(i);
  }

  succeeded(i: number, output: unknown, attempts: number, fallback?: FallbackKind): void {
    this.succeedStep(i, output, attempts, fallback);
  }

  failed(i: number, error: StepError, attempts: number): void {
    this.failStep(i, error, attempts);
  }

  retrying(i: number, attempt: number, error: StepError, duration: number, delay: number, fallback: FallbackKind | undefined, item: number | undefined): void {
    if (!this.onEvent) return;
    this.emit({
      type: 'step:retrying',
      run_id: this.id, chain: this.plan.name, timestamp: this.clock.now(), parent: this.parent,
      step: this.steps[i]!.name,
      index: i,
      attempt,
      error,
      duration_ms: duration,
      delay_ms: delay,
      fallback,
      item,
    });
  }

  /** Records the attempt count of a step still running (for the abort record). */
  noteAttempt(i: number, attempt: number): void {
    this.attempts[i] = attempt;
  }

  // ---------------------------------------------------------------------------------------------
  // The end

  private endEarly(code: string, message: string): void {
    this.runError = { code, message };
    this.stopping = true;
    this.finish();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    if (this.deadline !== undefined) this.clock.clearTimeout(this.deadline);
    if (this.callerAbort) this.options.signal!.removeEventListener('abort', this.callerAbort);
    const now = this.clock.now();
    const failed = this.runError !== undefined;
    let outputs: unknown = null;
    if (!failed) {
      try {
        outputs = this.outputs();
      } catch (error) {
        this.runError = { code: 'RESULT_INVALID', message: `the chain's outputs could not be computed: ${(error as Error).message}` };
      }
    }
    const status = this.runError === undefined ? 'succeeded' : 'failed';
    const result: RunResult = {
      run_id: this.id,
      chain: this.plan.name,
      status,
      outputs,
      error: this.runError,
      steps: this.summaries(),
      duration_ms: now - this.started,
    };
    if (this.onEvent) {
      this.emit({
        type: 'run:finished',
        run_id: this.id, chain: this.plan.name, timestamp: now, parent: this.parent,
        status,
        duration_ms: result.duration_ms,
        outputs,
        error: this.runError,
      });
    }
    this.resolve(result);
  }

  /** SPEC §2.1: the `outputs` map, or the output of the last step in the file that ran. */
  private outputs(): unknown {
    if (this.plan.outputs) return this.plan.outputs.get(this.ctx);
    for (let i = this.steps.length - 1; i >= 0; i--) {
      const s = this.status[i];
      if (s === SUCCEEDED || s === FAILED) return this.ctx[this.steps[i]!.name] ?? null;
    }
    return null;
  }

  private summaries(): Record<string, StepSummary> {
    const out: Record<string, StepSummary> = {};
    for (let i = 0; i < this.steps.length; i++) {
      const s = this.status[i]!;
      const error = this.errors?.[i];
      out[this.steps[i]!.name] = {
        status: STATUS_NAMES[s]!,
        attempts: this.attempts[i]!,
        duration_ms: s === PENDING ? 0 : this.durations[i]!,
        error,
      };
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Events and logs

  /** A listener's exception is its own problem: it must not break the run it listens to. */
  emit(event: RunEvent): void {
    try {
      this.onEvent!(event);
    } catch {
      // ignored on purpose
    }
  }

  log(step: string, attempt: number, message: string, fields: Record<string, unknown> | undefined): void {
    this.host.log({ timestamp: this.clock.now(), run_id: this.id, step, attempt, message, ...(fields !== undefined ? { fields } : {}) });
  }
}

/** Runs `plan` once. Never rejects for anything a user or a tool did: failures are in the result. */
export function executeChain(
  host: ExecutorHost,
  plan: ChainPlan,
  tools: ToolSet,
  input: unknown,
  options: RunOptions = {},
  parent?: ParentRef,
): Promise<RunResult> {
  return new Run(host, plan, options, parent).start(tools, input);
}
