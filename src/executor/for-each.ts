import { performCall, type CallContext, type CallWatcher, type RetryReport } from '../call/index.js';
import type { FallbackKind } from '../run-model/step-record.js';
import { describeKind, ToolchainError, type StepError } from '../common/errors.js';
import type { PlanStep } from '../compiler/plan.js';
import type { Run } from './run.js';
import type { Abortable } from './types.js';
import type { DistributedElement, Distributor } from './element-call.js';
import { attemptInput } from './step-state.js';
import { elementScope, resolveArgs } from './run-context.js';

// A `for_each` step runs its call once per element, at most `max_concurrency` at once
// (default: the chain's concurrency, or 16 when the chain sets none: a million elements must not
// all start at once), and its output is the array of results in input order. Elements start from
// a cursor as places free up, so a long array costs no queued work up front. Each element has its own retries and fallback. With `on_error: fail`
// the first element to fail for good fails the step and aborts the others; with `on_error:
// continue` a failed element's slot holds `{ error: { code, message } }` and the others go on,
// like a matrix without fail-fast. The step holds one engine slot; its elements are bounded by
// max_concurrency alone. The group is the CallWatcher of its elements (keyed by position) and
// reports to the run only through `apply`; how many elements are done it tells displays itself.

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
  const max = run.host.maxForEachElements;
  if (max !== undefined && items.length > max) {
    // Refused before any element starts: one request's input must not fan out without bound.
    const message = `step '${step.name}': its for_each ${forEach.items.source} selects ${items.length} elements, more than the ${max} this engine allows (the for-each-elements limit)`;
    return run.failed(i, { code: 'FOR_EACH_TOO_LARGE', message }, 0);
  }
  if (items.length === 0) return run.succeeded(i, [], 0, undefined);
  const group = new ForEachGroup(run, i, items, forEach.maxConcurrency ?? run.plan.concurrency ?? DEFAULT_FOR_EACH_CONCURRENCY);
  run.track(i, group);
  group.launch();
}

/** Elements of a for_each at once when neither the step nor its chain says. */
export const DEFAULT_FOR_EACH_CONCURRENCY = 16;

class ForEachGroup implements CallWatcher, Abortable {
  readonly settlesOnAbort = false;
  private readonly results: unknown[];
  private readonly contexts: (CallContext | undefined)[];
  private readonly started: number[];
  private readonly name: string;
  private finished = 0;
  /** Elements parked on a wait (an approval of their call, a sub-chain that waits): the step parks once the rest are done. */
  private parked = 0;
  private parkedOn = '';
  private attempts = 0;
  private over = false;
  /** The next element to start, and how many are at work. */
  private cursor = 0;
  private active = 0;
  private feeding = false;
  private readonly whenPerItem: boolean;
  /** Each element's input_map resolves to a new object (performCall's `fresh`). */
  private readonly freshArgs: boolean;
  /** `distribute: true` on a queue worker: elements go to other jobs, the run parks meanwhile. */
  private readonly remote: Distributor | undefined;
  private readonly dispatched: DistributedElement[] = [];

  constructor(
    private readonly run: Run,
    private readonly index: number,
    private readonly items: readonly unknown[],
    private readonly limit: number,
  ) {
    this.results = new Array<unknown>(items.length);
    this.contexts = new Array<CallContext | undefined>(items.length);
    this.started = new Array<number>(items.length);
    this.name = run.plan.steps[index]!.name;
    this.whenPerItem = run.plan.steps[index]!.forEach?.whenPerItem === true;
    this.freshArgs = !run.plan.steps[index]!.input.constant;
    this.remote = run.plan.steps[index]!.forEach?.distribute === true && run.keyPrefix === '' ? run.options.distributor : undefined;
  }

  launch(): void {
    this.reportDone();
    this.feed();
  }

  /** Starts elements while places are free. An element that settles at once (restored) frees its place for the loop. */
  private feed(): void {
    if (this.feeding) return;
    this.feeding = true;
    // One clock reading for the elements one pass starts: they start at the same moment.
    const now = this.cursor < this.items.length ? this.run.clock.now() : 0;
    while (!this.over && this.active < this.limit && this.cursor < this.items.length) {
      this.active++;
      this.element(this.cursor++, now);
    }
    this.feeding = false;
    // A batch of at most max_concurrency elements leaves; the run resumes when they are all done.
    if (this.remote !== undefined && this.dispatched.length > 0 && !this.over) {
      this.remote.dispatch(this.name, this.dispatched.splice(0));
      this.run.stop({ code: 'RUN_SUSPENDED', message: `run ${this.run.runId} waits for the elements of '${this.name}' on the workers` }, 'RUN_SUSPENDED');
    }
  }

  /** One element's call; its outcome comes back through the CallWatcher methods. */
  private element(k: number, now: number): void {
    // An element whose success was recorded is not run again.
    const restored = this.run.restoredRecord(`${this.name}[${k}]`);
    if (restored !== undefined) return this.settle(k, restored.output, restored.attempts);
    this.started[k] = now;
    const scope = elementScope(this.run.context, this.items[k], k);
    if (this.whenPerItem) {
      // An element whose `when` is false is skipped: null in its slot.
      let go: boolean;
      try {
        go = this.run.plan.steps[this.index]!.when!.test(scope);
      } catch (error) {
        return this.failed(k, { code: 'VALIDATION_FAILED', message: `its 'when' could not be evaluated: ${(error as Error).message}` });
      }
      if (!go) return this.settle(k, null, 0);
    }
    const { args, unresolved } = resolveArgs(this.run, this.index, scope);
    if (this.remote !== undefined) return this.distributed(k, args, unresolved);
    performCall({ owner: this.run, site: this.run.site(this.index), watcher: this, key: k, args, scope, item: k, unresolved, fresh: this.freshArgs });
  }

  private distributed(k: number, args: Record<string, unknown>, unresolved: StepError | undefined): void {
    if (unresolved !== undefined) return this.failed(k, unresolved);
    const done = this.remote!.outcome(this.name, k);
    if (done === undefined) return void this.dispatched.push({ index: k, args });
    this.started[k] = done.started_at;
    if (done.ok) this.succeeded(k, done.output, done.attempts, undefined);
    else this.failed(k, done.error);
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
    if (error.code === 'RUN_WAITING') return this.park(k, error.message);
    if (this.run.plan.steps[this.index]!.onError === 'continue') return this.settle(k, { error: { code: error.code, message: error.message } }, 0);
    this.contexts[k] = undefined;
    this.abort(new ToolchainError('ABORTED', `aborted because item ${k} of the same for_each failed`));
    this.run.failed(this.index, { code: error.code, message: `item ${k}: ${error.message}` }, this.attempts);
  }

  private settle(k: number, output: unknown, attempts: number): void {
    if (attempts > this.attempts) this.attempts = attempts;
    this.results[k] = output;
    this.contexts[k] = undefined;
    this.active--;
    this.finished++;
    this.reportDone();
    this.next();
  }

  /** Element `k` waits; what it waits for is recorded, and a later execution of the run starts it again. */
  private park(k: number, why: string): void {
    this.contexts[k] = undefined;
    this.active--;
    if (this.parked++ === 0) this.parkedOn = `item ${k}: ${why}`;
    this.next();
  }

  private next(): void {
    if (this.finished + this.parked < this.items.length) return this.feed();
    this.over = true;
    if (this.parked > 0) return this.run.failed(this.index, { code: 'RUN_WAITING', message: this.parked === 1 ? this.parkedOn : `${this.parked} items wait (${this.parkedOn})` }, this.attempts);
    this.run.succeeded(this.index, this.results, this.attempts, undefined);
  }

  /** How many elements are done, for displays (RunOptions.onProgress). */
  private reportDone(): void {
    this.run.options.onProgress?.({ run_id: this.run.runId, step: this.name, done: this.finished, total: this.items.length });
  }

  abort(reason: Error): void {
    this.over = true;
    for (const ctx of this.contexts) ctx?.abort(reason);
  }
}
