import type { PlanStep } from '../compiler/plan.js';
import { describeKind, ToolchainError } from '../common/errors.js';
import type { Abortable, AttemptContext } from './attempt-context.js';
import { runAttempts, type AttemptSink } from './attempt.js';
import type { Run } from './run-chain.js';
import type { StepError } from './step-error.js';

// SPEC §2.6: a `for_each` step runs its work once per element, at most `max_concurrency` at once
// (default: the chain's concurrency), and its output is the array of results in input order.
// Each element has its own retries and fallback. With `on_error: fail` the first element to fail
// for good fails the step and aborts the others; with `on_error: continue` a failed element's slot
// holds `{ error: { code, message } }` and the others go on, like a matrix without fail-fast. The
// step holds one engine slot; its elements are bounded by max_concurrency alone.

export function startForEach(run: Run, i: number, step: PlanStep): void {
  const forEach = step.forEach!;
  let items: unknown;
  try {
    items = forEach.items.get(run.ctx);
  } catch (error) {
    items = error;
  }
  if (!Array.isArray(items)) {
    const message = `step '${step.name}': for_each ${forEach.items.source} yielded ${describeKind(items)}, not an array`;
    return run.failStep(i, { code: 'VALIDATION_FAILED', message }, 0);
  }
  if (items.length === 0) return run.succeedStep(i, [], 0);
  const limit = forEach.maxConcurrency ?? run.plan.concurrency ?? Infinity;
  const group = new ForEachGroup(run, i, items, limit);
  run.controls[i] = group;
  group.launch();
}

class ForEachGroup implements AttemptSink, Abortable {
  private readonly results: unknown[];
  private readonly contexts: (AttemptContext | undefined)[];
  private next = 0;
  private active = 0;
  private finished = 0;
  private attempts = 0;
  private over = false;
  private launching = false;

  constructor(
    private readonly run: Run,
    private readonly index: number,
    private readonly items: readonly unknown[],
    private readonly limit: number,
  ) {
    this.results = new Array<unknown>(items.length);
    this.contexts = new Array<AttemptContext | undefined>(items.length);
  }

  launch(): void {
    // Elements that finish synchronously (a fixed fallback output) call back into launch; the
    // flag keeps that a loop instead of a recursion as deep as the array.
    if (this.launching) return;
    this.launching = true;
    while (!this.over && this.active < this.limit && this.next < this.items.length) {
      const k = this.next++;
      this.active++;
      const scope = Object.create(this.run.ctx) as Record<string, unknown>;
      scope.item = this.items[k];
      scope.index = k;
      void runAttempts(this.run, this.index, scope, this, k, k);
    }
    this.launching = false;
  }

  track(ctx: AttemptContext, k: number): void {
    this.contexts[k] = ctx;
    if (ctx.attempt > this.attempts) {
      this.attempts = ctx.attempt;
      this.run.noteAttempt(this.index, ctx.attempt);
    }
  }

  live(): boolean {
    return !this.over && this.run.isLive(this.index);
  }

  succeeded(k: number, output: unknown): void {
    if (!this.live()) return;
    this.settle(k, output);
  }

  failed(k: number, error: StepError): void {
    if (!this.live()) return;
    if (this.run.plan.steps[this.index]!.onError === 'continue') {
      this.settle(k, { error: { code: error.code, message: error.message } });
      return;
    }
    this.contexts[k] = undefined;
    const failure: StepError = { code: error.code, message: `item ${k}: ${error.message}` };
    this.abort(new ToolchainError('ABORTED', `aborted because item ${k} of the same for_each failed`));
    this.run.failStep(this.index, failure, this.attempts);
  }

  private settle(k: number, output: unknown): void {
    this.results[k] = output;
    this.contexts[k] = undefined;
    this.active--;
    if (++this.finished === this.items.length) {
      this.over = true;
      this.run.succeedStep(this.index, this.results, this.attempts);
    } else {
      this.launch();
    }
  }

  abort(reason: Error): void {
    this.over = true;
    for (const ctx of this.contexts) ctx?.abort(reason);
  }
}
