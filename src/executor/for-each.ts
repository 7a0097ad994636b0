import pLimit, { type LimitFunction } from 'p-limit';
import { performCall, type CallContext, type CallWatcher, type FallbackKind, type RetryReport } from '../call/index.js';
import { describeKind, ToolchainError, type StepError } from '../common/errors.js';
import type { PlanStep } from '../compiler/plan.js';
import type { Run } from './run.js';
import type { Abortable } from './types.js';
import { attemptInput } from './step-state.js';
import { resolveArgs } from './step-work.js';

// SPEC §2.6: a `for_each` step runs its call once per element, at most `max_concurrency` at once
// (default: the chain's concurrency; p-limit keeps the count), and its output is the array of
// results in input order. Each element has its own retries and fallback. With `on_error: fail`
// the first element to fail for good fails the step and aborts the others; with `on_error:
// continue` a failed element's slot holds `{ error: { code, message } }` and the others go on,
// like a matrix without fail-fast. The step holds one engine slot; its elements are bounded by
// max_concurrency alone. The group is the CallWatcher of its elements (keyed by position) and
// reports to the run only through `apply`.

export function startForEach(run: Run, i: number, step: PlanStep): void {
  const forEach = step.forEach!;
  let items: unknown;
  try {
    items = forEach.items.get(run.context);
  } catch (error) {
    items = error;
  }
  if (!Array.isArray(items)) {
    const message = `for_each ${forEach.items.source} yielded ${describeKind(items)}, not an array`;
    return run.failed(i, { code: 'VALIDATION_FAILED', message }, 0);
  }
  if (items.length === 0) return run.succeeded(i, [], 0, undefined);
  const group = new ForEachGroup(run, i, items, pLimit(forEach.maxConcurrency ?? run.plan.concurrency ?? Infinity));
  run.track(i, group);
  group.launch();
}

class ForEachGroup implements CallWatcher, Abortable {
  readonly settlesOnAbort = false;
  private readonly results: unknown[];
  private readonly contexts: (CallContext | undefined)[];
  private readonly done: (() => void)[];
  private readonly started: number[];
  private readonly name: string;
  private finished = 0;
  private attempts = 0;
  private over = false;

  constructor(
    private readonly run: Run,
    private readonly index: number,
    private readonly items: readonly unknown[],
    private readonly limit: LimitFunction,
  ) {
    this.results = new Array<unknown>(items.length);
    this.contexts = new Array<CallContext | undefined>(items.length);
    this.done = new Array<() => void>(items.length);
    this.started = new Array<number>(items.length);
    this.name = run.plan.steps[index]!.name;
  }

  launch(): void {
    for (let k = 0; k < this.items.length; k++) void this.limit(() => this.element(k));
  }

  /** One element's call; settles when its outcome is in, which frees its place in the limit. */
  private element(k: number): Promise<void> {
    if (this.over) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.done[k] = resolve;
      // SPEC §7.2: an element whose success was recorded is not run again.
      const restored = this.run.restoredRecord(`${this.name}[${k}]`);
      if (restored !== undefined) return this.settle(k, restored.output, restored.attempts);
      this.started[k] = this.run.clock.now();
      const scope = Object.create(this.run.context) as Record<string, unknown>;
      scope.item = this.items[k];
      scope.index = k;
      const { args, unresolved } = resolveArgs(this.run, this.index, scope);
      performCall(this.run, this.run.site(this.index), this, k, args, scope, k, unresolved);
    });
  }

  live(): boolean {
    return !this.over && this.run.live(this.index);
  }

  attempt(k: number, ctx: CallContext): void {
    this.contexts[k] = ctx;
    if (ctx.attempt > this.attempts) this.attempts = ctx.attempt;
    this.run.apply(this.index, attemptInput(ctx.attempt));
  }

  retrying(k: number, report: RetryReport): void {
    if (this.live()) this.run.retrying(this.index, report, k);
  }

  succeeded(k: number, output: unknown, attempts: number, fallback: FallbackKind | undefined): void {
    if (!this.live()) return;
    const started = this.started[k]!;
    this.run.recordPart(`${this.name}[${k}]`, () => ({
      step: this.name,
      index: this.index,
      status: 'succeeded',
      attempts,
      output,
      error: undefined,
      started_at: started,
      duration_ms: this.run.clock.now() - started,
      fallback,
      reason: undefined,
    }));
    this.settle(k, output, attempts);
  }

  failed(k: number, error: StepError): void {
    if (!this.live()) return;
    if (this.run.plan.steps[this.index]!.onError === 'continue') return this.settle(k, { error: { code: error.code, message: error.message } }, 0);
    this.contexts[k] = undefined;
    this.abort(new ToolchainError('ABORTED', `aborted because item ${k} of the same for_each failed`));
    this.run.failed(this.index, { code: error.code, message: `item ${k}: ${error.message}` }, this.attempts);
  }

  private settle(k: number, output: unknown, attempts: number): void {
    if (attempts > this.attempts) this.attempts = attempts;
    this.results[k] = output;
    this.contexts[k] = undefined;
    this.done[k]!();
    if (++this.finished < this.items.length) return;
    this.over = true;
    this.run.succeeded(this.index, this.results, this.attempts, undefined);
  }

  abort(reason: Error): void {
    this.over = true;
    this.limit.clearQueue();
    for (const ctx of this.contexts) ctx?.abort(reason);
    for (const resolve of this.done) resolve?.();
  }
}
