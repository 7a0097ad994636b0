// createWorker: an engine with its own chains and plugins (reloaded when they change,
// by default) that executes the runs of a BullMQ queue, recording them in the shared store.
// With `triggers`, it keeps the queue's job schedulers matching its chains' triggers and takes
// their tick jobs (queue/tick-jobs.ts): a tick's run is recorded and enqueued under the id the
// tick names, so any worker executes it, and one run per tick holds across every worker and
// server on the store.

import { openEngine } from './engine.js';
import type { Engine } from './types.js';
import type { EngineOptions } from './options.js';
import { systemClock } from '../executor/index.js';
import { parseQueueUrl, queueStoreFailure } from '../queue/connection.js';
import { startQueueWorker, type QueueWorkerOptions } from '../queue/worker.js';
import { openStore } from '../store/open-store.js';
import { QueueSubmitter } from '../queue/submit.js';
import { startQueueTriggers, type QueueTriggers } from '../queue/tick-jobs.js';

export interface WorkerOptions extends QueueWorkerOptions, Omit<EngineOptions, 'queue' | 'store'> {
  /** The shared run store (default: the queue's Redis): `postgres://…` for one that outlives Redis. */
  readonly store?: string;
}

export interface ToolchainWorker {
  /** The engine that executes the runs (its chains, tools, plugins). */
  readonly engine: Engine;
  /** Runs executing here now. */
  active(): number;
  /** Stops taking runs, waits up to `graceMs` (default 30 s) for those executing, then releases the rest; true if all finished. */
  close(graceMs?: number): Promise<boolean>;
}

export async function createWorker(options: WorkerOptions): Promise<ToolchainWorker> {
  const address = parseQueueUrl(options.queue);
  const store = await openStore(options.store ?? address.redis, { durability: options.durability ?? 'normal' }).catch((error: unknown) => {
    throw options.store === undefined ? queueStoreFailure(address, error) : error;
  });
  let engine: Engine | undefined;
  let submitter: QueueSubmitter | undefined;
  let fired: QueueTriggers | undefined;
  try {
    const { queue: _q, store: _s, concurrency, stalledIntervalMs, reconcileIntervalMs, recover, onNotice, triggers, triggerIntervalMs: _t, onTrigger, onChainsReloaded, ...engineOptions } = options;
    // `concurrency` is the worker's runs at once; steps within a run are bounded by the chains.
    const opened = await openEngine({
      watch: true,
      ...engineOptions,
      store,
      // A reload reschedules at once: the job schedulers follow the chains.
      onChainsReloaded: (e) => {
        onChainsReloaded?.(e);
        void fired?.sync().catch(() => undefined);
      },
    });
    engine = opened.engine;
    const clock = options.clock ?? systemClock;
    // The worker drives the engine's internal side: element calls of distributed for_each steps, resumes with its plumbing.
    const queueWorker = await startQueueWorker(opened.worker, store, clock, { queue: options.queue, concurrency, stalledIntervalMs, reconcileIntervalMs, recover, onNotice });
    const e = engine;
    submitter = triggers === true ? await QueueSubmitter.open(address, store, clock) : undefined;
    const into = submitter;
    fired = into
      ? await startQueueTriggers({
          address,
          store,
          clock,
          plans: () => e.chains(),
          start: (plan, input, runId) => into.submit(plan, input, runId).then(() => 'fired' as const),
          ...(onTrigger ? { onEvent: onTrigger } : {}),
        })
      : undefined;
    const triggering = fired;
    return {
      engine: e,
      active: () => queueWorker.active(),
      async close(graceMs) {
        await triggering?.close();
        await into?.close();
        const inTime = await queueWorker.close(graceMs);
        // Runs released after the grace keep executing here until the process ends; their writes are fenced by the new owner.
        await e.close();
        await store.close();
        return inTime;
      },
    };
  } catch (error) {
    await fired?.close();
    await submitter?.close();
    await engine?.close();
    await store.close();
    throw error;
  }
}
