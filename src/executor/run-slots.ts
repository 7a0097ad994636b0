import type { Slots } from './slots.js';

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
