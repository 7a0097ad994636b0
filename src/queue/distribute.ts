import type { Job, Queue } from 'bullmq';
import type { DistributedElement, Distributor, ElementOutcome } from '../executor/element-call.js';
import type { RunStore } from '../store/types.js';
import { JOB_OPTIONS } from './job-codec.js';

// Distributed `for_each` (SPEC §7.3) with BullMQ flows: a run that reaches a `distribute: true`
// for_each hands a batch of at most `max_concurrency` elements to child jobs of its own job and
// parks (RUN_SUSPENDED); its job moves to `waiting-children`, so it holds no worker slot. Any
// worker takes the children; each runs its element's call, records a success under `step[i]` in
// the store and returns the outcome. When the batch is done BullMQ hands the run's job back to a
// worker, which resumes the run: recorded elements are not run again, failed ones come from the
// children's values, and the next batch leaves. Batches keep the elements in flight across the
// cluster within max_concurrency.

export interface ElementJob {
  readonly v: 1;
  readonly kind: 'element';
  readonly runId: string;
  readonly chain: string;
  readonly hash: string;
  readonly step: string;
  /** The step's position in the plan (what its records carry). */
  readonly stepIndex: number;
  readonly element: DistributedElement;
}

export interface ElementResult {
  readonly step: string;
  readonly index: number;
  readonly outcome: ElementOutcome;
}

export function isElementJob(data: unknown): data is ElementJob {
  const d = data as Partial<ElementJob> | null;
  return typeof d === 'object' && d !== null && d.v === 1 && d.kind === 'element' && typeof d.runId === 'string' && typeof d.step === 'string' && typeof d.element?.index === 'number';
}

/** A distributor for one execution of a parent job: outcomes from its children so far, and the batch it asks for. */
export async function parentDistributor(job: Job): Promise<{ distributor: Distributor; batch: () => { step: string; elements: readonly DistributedElement[] } | undefined }> {
  const outcomes = new Map<string, ElementOutcome>();
  for (const value of Object.values(await job.getChildrenValues<ElementResult | undefined>())) {
    if (value !== undefined && value !== null) outcomes.set(`${value.step}[${value.index}]`, value.outcome);
  }
  let batch: { step: string; elements: readonly DistributedElement[] } | undefined;
  return {
    distributor: { outcome: (step, index) => outcomes.get(`${step}[${index}]`), dispatch: (step, elements) => void (batch = { step, elements }) },
    batch: () => batch,
  };
}

/**
 * Adds the batch as children of the run's job, then parks the job; false when they were all done
 * already (the job goes on at once). Child ids carry the run's epoch: a later execution's batch
 * never collides with an earlier one's jobs, which BullMQ keeps for a while.
 */
export async function dispatchBatch(queue: Queue, job: Job, token: string, run: { id: string; chain: string; hash: string; epoch: number; stepIndex: number }, step: string, elements: readonly DistributedElement[]): Promise<boolean> {
  await queue.addBulk(
    elements.map((element) => ({
      name: 'element',
      data: { v: 1, kind: 'element', runId: run.id, chain: run.chain, hash: run.hash, step, stepIndex: run.stepIndex, element } satisfies ElementJob,
      // A child that crashed every try must not leave its parent waiting for ever: the run sends that element again.
      opts: { ...JOB_OPTIONS, jobId: `${run.id}~${step}~${element.index}~e${run.epoch}`, parent: { id: job.id!, queue: job.queueQualifiedName }, ignoreDependencyOnFailure: true },
    })),
  );
  return job.moveToWaitingChildren(token);
}

/** What runs an element's call (the engine). */
export interface ElementCaller {
  chain(name: string): { readonly hash: string } | undefined;
  callElement(chain: string, step: string, element: DistributedElement, runId: string, signal?: AbortSignal): Promise<ElementOutcome>;
}

/** A child job: the element's call, its success recorded under the run's current epoch. */
export async function processElement(engine: ElementCaller, store: RunStore, data: ElementJob, signal: AbortSignal): Promise<ElementResult> {
  const { runId, step, element } = data;
  const answer = (outcome: ElementOutcome): ElementResult => ({ step, index: element.index, outcome });
  const refuse = (code: 'ABORTED' | 'CHAIN_CHANGED', message: string): ElementResult => answer({ ok: false, error: { code, message }, attempts: 0, started_at: Date.now(), duration_ms: 0 });
  const run = await store.getRun(runId);
  if (run === undefined || run.status !== 'running' || run.cancel_requested) return refuse('ABORTED', `run ${runId} is no longer running`);
  if (engine.chain(data.chain)?.hash !== data.hash) return refuse('CHAIN_CHANGED', `chain '${data.chain}' on this worker is not the one run ${runId} runs; give the workers the same chains folder`);
  const outcome = await engine.callElement(data.chain, step, element, runId, signal);
  if (outcome.ok) {
    const record = { key: `${step}[${element.index}]`, step, index: data.stepIndex, status: 'succeeded' as const, attempts: outcome.attempts, output: outcome.output, error: undefined, started_at: outcome.started_at, duration_ms: outcome.duration_ms };
    // Fenced (the run was taken over meanwhile) writes nothing; the outcome still reaches the run through the job.
    await store.recordSteps([{ run_id: runId, epoch: run.epoch, steps: [record] }]);
  }
  return answer(outcome);
}
