import type { ChainPlan } from '../compiler/plan.js';
import type { Slots } from './slots.js';
import type { StepRecorder } from '../run-model/recording.js';

type WhenRecorded = NonNullable<StepRecorder['whenRecorded']>;

// Which of a run's steps may start (ReadyQueue): a countdown per step of the steps it waits for (a
// step is ready the moment its last dependency finishes), a FIFO of ready steps, and the limits —
// the chain's `concurrency` and the engine's slots, of which the run holds a share (RunSlots). It
// knows nothing of step states: the run decides what a ready step becomes (started, skipped, or
// nothing because it was restored).

export class ReadyQueue {
  private readonly remaining: number[];
  /**
   * Ready steps are ready[head..tail): reused from the start once drained (setting `length` costs a
   * runtime call per pass). Made at its likely size: grown from empty, its first write allocated
   * room for 17, a fifth of a short run's scheduling memory.
   */
  private readonly ready: number[];
  private head = 0;
  private tail = 0;
  private running = 0;
  /** Steps done whose dependents wait for their results to be written. */
  private held = 0;

  constructor(
    private readonly plan: ChainPlan,
    waitCounts: readonly number[],
    private readonly limit: number,
    /** The run's share of the engine's slots, when the engine has a limit. */
    private readonly slots: RunSlots | undefined,
    /** Steps became ready outside a scheduling pass (a result they read was written). */
    private readonly wake: () => void,
  ) {
    this.remaining = waitCounts.slice();
    this.ready = new Array<number>(Math.min(waitCounts.length, 16));
    for (const root of plan.roots) this.ready[this.tail++] = root;
  }

  /** The oldest ready step, still in the queue. */
  peek(): number | undefined {
    return this.head < this.tail ? this.ready[this.head] : undefined;
  }

  /** Removes the oldest ready step without starting it (skipped, restored, or settled). */
  drop(): void {
    this.head++;
  }

  /** Removes the oldest ready step to start it, if the limits allow; false leaves it queued. */
  admit(i: number): boolean {
    if (this.running >= this.limit) return false;
    if (this.slots && this.plan.steps[i]!.target.kind === 'tool' && !this.slots.take(i)) return false;
    this.head++;
    this.running++;
    return true;
  }

  /** A step is started outside the limits (to fail at once: its `when` could not be evaluated). */
  startOutsideLimits(): void {
    this.head++;
    this.running++;
  }

  /** A started step ended: its place (and slot) are free. */
  finished(i: number): void {
    this.slots?.free(i);
    this.running--;
  }

  /**
   * Step `i` is done for the steps that wait for it; with `whenRecorded` (a run store writing
   * behind), only once its result is written. The run is not over while a step is held so.
   */
  release(i: number, whenRecorded?: WhenRecorded): void {
    const dependents = this.plan.steps[i]!.dependents;
    if (whenRecorded !== undefined && dependents.length > 0) {
      this.held++;
      return whenRecorded((failed) => {
        this.held--;
        if (failed) return; // the run is being stopped
        this.countDown(dependents);
        this.wake();
      });
    }
    this.countDown(dependents);
  }

  private countDown(dependents: readonly number[]): void {
    for (let k = 0; k < dependents.length; k++) {
      const d = dependents[k]!;
      if (--this.remaining[d]! === 0) this.ready[this.tail++] = d;
    }
  }

  /** After a scheduling pass; true when nothing runs and nothing is ready: the run is over. */
  settle(starting: boolean): boolean {
    if (this.head === this.tail) this.head = this.tail = 0;
    this.slots?.settle(starting && this.tail > 0);
    return this.running === 0 && this.tail === 0 && this.held === 0;
  }

  close(): void {
    this.slots?.close();
  }
}

// The engine-wide slots one run's steps hold (EngineOptions.concurrency). A tool step takes a
// slot before it starts and gives it back when it ends; when none is free the run asks to be woken
// and the engine hands it the next freed slot directly, which it keeps as `spare` until a step
// uses it. Sub-chain and agent steps take none: they only wait for steps of their own, and if
// they held slots too, nested chains could exhaust the pool and wait on each other forever.

export class RunSlots {
  private held: boolean[] | undefined;
  private spare = false;
  private waiting = false;
  private finished = false;

  constructor(
    private readonly slots: Slots,
    private readonly wake: () => void,
  ) {}

  /** Takes a slot for step `i`; false when none is free (the run is woken once one is). */
  take(i: number): boolean {
    if (this.spare) this.spare = false;
    else if (!this.slots.tryAcquire()) {
      if (!this.waiting) {
        this.waiting = true;
        this.slots.wait(() => this.handedOver());
      }
      return false;
    }
    (this.held ??= [])[i] = true;
    return true;
  }

  free(i: number): void {
    if (this.held?.[i] !== true) return;
    this.held[i] = false;
    this.slots.release();
  }

  /** After a scheduling pass: a slot handed over that no step can use now goes back. */
  settle(needsMore: boolean): void {
    if (this.spare && !needsMore) {
      this.spare = false;
      this.slots.release();
    }
  }

  /** The run is over: a slot handed over later goes straight back. */
  close(): void {
    this.finished = true;
    this.settle(false);
  }

  private handedOver(): void {
    this.waiting = false;
    if (this.finished) return this.slots.release();
    this.spare = true;
    this.wake();
  }
}
