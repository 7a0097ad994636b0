import { performCall, toStepError, type CallContext, type CallOwner, type CallSite, type CallWatcher, type RetryReport } from '../call/index.js';
import type { FallbackKind } from '../run-model/step-record.js';
import { CallFailure } from '../call/index.js';
import type { StepError } from '../common/errors.js';
import type { PlanStep, RepeatPlan } from '../compiler/plan.js';
import { MAX_SUBCHAIN_DEPTH } from '../compiler/subchain-graph.js';
import { stepSite } from './call-sites.js';
import type { Run } from './run.js';
import { chainCallee } from './step-callees.js';
import { resolveArgs } from './run-context.js';
import type { StepRecord } from '../run-model/step-record.js';

// A `repeat` step (polling): rounds of the step's call, each with its own attempts, backoff and
// fallback. After a round, `until` is read with `$.this` = the round's output; while it is false
// the run sleeps `every` from the end of that round — a durable sleep through the run's waits,
// as a `sleep:` step's (the step parks, the run is parked in the store, a waker resumes it) — and
// runs the next round, at most `max_attempts`; then the step fails with REPEAT_EXHAUSTED.
//
// Each round is recorded under `STEP#N` as it ends; the step's own record holds the last round's
// output and every round's calls. A later execution of the run (a wake, a resume) restores the
// rounds recorded before and goes on from the next one: a recorded round is never run again. A
// round that fails for good fails the step with its error (`round N: …`); `retry` and `fallback`
// belong to one round, `on_error` to the step. A mocked step (a chain test, a dry run) runs its
// rounds without sleeping: a mock stands in for the step's time as well as for its tool.

export function startRepeat(run: Run, i: number, step: PlanStep): void {
  new Rounds(run, i, step, step.repeat!).begin();
}

/** The record key of round `n` of `step` (in its run, before the run's key prefix). */
export function roundKey(step: string, n: number): string {
  return `${step}#${n}`;
}

class Rounds implements CallWatcher {
  readonly settlesOnAbort = false;
  /** The round at work, or the last one that ended. */
  private round = 0;
  /** Calls over every round, restored ones included: the step's `attempts`. */
  private attempts = 0;
  /** When the round at work started. */
  private started = 0;

  constructor(
    private readonly run: Run,
    private readonly index: number,
    private readonly step: PlanStep,
    private readonly plan: RepeatPlan,
  ) {}

  /** Goes on after the rounds recorded before, or starts round 1. */
  begin(): void {
    let last: StepRecord | undefined;
    for (let n = 1; n <= this.plan.maxAttempts; n++) {
      const recorded = this.run.restoredRecord(roundKey(this.step.name, n));
      if (recorded === undefined) break;
      last = recorded;
      this.round = n;
      this.attempts += recorded.attempts;
    }
    if (last === undefined) return this.call(1);
    this.decide(last.output, last.started_at + last.duration_ms, last.fallback, undefined);
  }

  /** After round `this.round` ended at `endedAt` with `output`: done, exhausted, or sleep and go again. `fresh`: the round ran now (not restored), with this many calls. */
  private decide(output: unknown, endedAt: number, fallback: FallbackKind | undefined, fresh: { attempts: number; started: number } | undefined): void {
    const { run, index, plan } = this;
    let done: boolean;
    try {
      done = plan.until.test(withThis(run.context, output));
    } catch (error) {
      return run.failed(index, { code: 'VALIDATION_FAILED', message: `its repeat.until could not be evaluated after round ${this.round}: ${(error as Error).message}` }, this.attempts);
    }
    const last = this.round >= plan.maxAttempts;
    const nextAt = done || last ? undefined : endedAt + plan.everyMs;
    if (fresh !== undefined && run.onEvent) this.emitRound(output, endedAt, fresh, done, nextAt);
    if (done) return run.succeeded(index, output, this.attempts, fallback);
    if (last) {
      const rounds = `${plan.maxAttempts} round${plan.maxAttempts === 1 ? '' : 's'}`;
      return run.failed(index, { code: 'REPEAT_EXHAUSTED', message: `repeat.until (${plan.until.source}) was still false after ${rounds}` }, this.attempts);
    }
    if (this.mocked()) return this.call(this.round + 1);
    void this.sleep(this.round + 1, nextAt!);
  }

  /** The step's callee is a mock (a chain test, `run --mock`). */
  private mocked(): boolean {
    const mocks = this.run.options.mocks;
    return mocks !== undefined && mocks.callee(this.step.name, undefined) !== undefined;
  }

  /** The sleep before round `n`, until `untilMs`: over, the round runs; not over, the step parks and a later execution asks again. */
  private async sleep(n: number, untilMs: number): Promise<void> {
    const { run, index } = this;
    const waits = run.waits;
    if (waits === undefined) {
      return run.failed(index, { code: 'USAGE', message: `step '${this.step.name}' repeats, and this run keeps no waits to sleep between rounds (a chain an agent's model calls cannot sleep)` }, this.attempts);
    }
    let answer;
    try {
      // Keyed by the round it leads to: found again, with the same end, by every later execution.
      answer = await waits.wait({ key: run.waitKey(roundKey(this.step.name, n), undefined), kind: 'sleep', untilMs });
    } catch (error) {
      if (run.live(index)) run.failed(index, toStepError(error), this.attempts);
      return;
    }
    if (!run.live(index)) return;
    if (!answer.over) return run.failed(index, { code: 'RUN_WAITING', message: answer.why }, this.attempts);
    if ('error' in answer) return run.failed(index, answer.error, this.attempts);
    this.call(n);
  }

  /** Round `n`: the step's call, reported back here. */
  private call(n: number): void {
    const { run, index } = this;
    this.round = n;
    this.started = run.clock.now();
    const { args, unresolved } = resolveArgs(run, index, run.context);
    performCall({ owner: roundOwner(run, roundKey(this.step.name, n)), site: this.site(n), watcher: this, key: n, args, scope: run.context, item: undefined, unresolved, fresh: !this.step.input.constant });
  }

  /**
   * The step's site; a sub-chain's is made per round, so that its steps are recorded (and
   * restored) under `STEP#N›…` and a round never finds the records of the one before.
   */
  private site(n: number): CallSite {
    const { run, step } = this;
    const target = step.target;
    if (target.kind !== 'chain' || this.mocked()) return run.site(this.index);
    const callee = chainCallee(run.host, target.chain, (plan, input, ctx) => {
      if (run.depth >= MAX_SUBCHAIN_DEPTH) throw new CallFailure({ code: 'SUBCHAIN_TOO_DEEP', message: `chain '${plan.name}' would run ${run.depth + 1} levels of sub-chains deep; at most ${MAX_SUBCHAIN_DEPTH} are allowed` });
      return run.child(plan, input, ctx.signal, step.name, roundKey(step.name, n));
    });
    return stepSite(step, callee, run.bound.fallbackTools[this.index]);
  }

  // ---------------------------------------------------------------------------------------------
  // The round's call reports here (keyed by round).

  live(n: number): boolean {
    return n === this.round && this.run.live(this.index);
  }

  attempt(_n: number, ctx: CallContext): void {
    this.run.attempt(this.index, ctx);
  }

  retrying(n: number, report: RetryReport): void {
    if (this.live(n)) this.run.retrying(this.index, report);
  }

  succeeded(n: number, value: unknown, attempts: number, fallback: FallbackKind | undefined): void {
    if (!this.live(n)) return;
    this.attempts += attempts;
    const at = this.run.clock.now();
    const started = this.started;
    this.run.recordPart(roundKey(this.step.name, n), () => this.record('succeeded', started, at, attempts, value, undefined, fallback));
    this.decide(value, at, fallback, { attempts, started });
  }

  failed(n: number, error: StepError, attempts: number): void {
    if (!this.live(n)) return;
    // A dangerous call waiting for a decision: the step parks, and the round runs again once decided.
    if (error.code === 'RUN_WAITING') return this.run.failed(this.index, error, this.attempts);
    this.attempts += attempts;
    const at = this.run.clock.now();
    const started = this.started;
    this.run.recordPart(roundKey(this.step.name, n), () => this.record('failed', started, at, attempts, undefined, error, undefined));
    this.run.failed(this.index, { ...error, message: `round ${n}: ${error.message}` }, this.attempts);
  }

  private record(status: 'succeeded' | 'failed', started: number, at: number, attempts: number, output: unknown, error: StepError | undefined, fallback: FallbackKind | undefined): StepRecord {
    return { step: this.step.name, index: this.index, status, attempts, output, error, started_at: started, duration_ms: at - started, fallback, reason: undefined };
  }

  private emitRound(output: unknown, endedAt: number, fresh: { attempts: number; started: number }, done: boolean, nextAt: number | undefined): void {
    const run = this.run;
    run.emit({
      type: 'step:round',
      run_id: run.runId, chain: run.plan.name, timestamp: endedAt, parent: run.parent,
      step: this.step.name, index: this.index, item: undefined, call: undefined,
      round: this.round, max_rounds: this.plan.maxAttempts, attempts: fresh.attempts, output, started_at: fresh.started, duration_ms: endedAt - fresh.started, done, next_at: nextAt,
    });
  }
}

/** What `until` reads: the run's context, with `$.this` the round's output. */
function withThis(context: Record<string, unknown>, output: unknown): Record<string, unknown> {
  const scope = Object.create(context) as Record<string, unknown>;
  scope.this = output;
  return scope;
}

/** The run as the owner of one round's call: the same in all but its idempotency key (`RUN_ID:STEP#N`). */
function roundOwner(run: Run, key: string): CallOwner {
  return {
    runId: run.runId,
    clock: run.clock,
    random: run.random,
    approve: run.approve,
    observed: run.observed,
    debug: run.debug,
    waits: run.waits,
    idempotencyKey: (_label, item) => run.idempotencyKey(key, item),
    waitKey: (label, item) => run.waitKey(label, item),
    log: (label, attempt, message, fields, item) => run.log(label, attempt, message, fields, item),
    callProgress: (label, attempt, item, report) => run.callProgress(label, attempt, item, report),
  };
}
