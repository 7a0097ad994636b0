import type { Job, Queue } from 'bullmq';
import type { ChainPlan } from '../compiler/plan.js';
import { elementArgs, elementSource, type ElementSource } from '../executor/element-args.js';
import type { DistributedElement, Distributor, ElementOutcome } from '../executor/element-call.js';
import type { RunStore, StoredRun } from '../store/types.js';
import { JOB_OPTIONS } from './job-codec.js';

// Distributed `for_each` with BullMQ flows: a run that reaches a `distribute: true`
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
  /** The run's epoch when its execution dispatched the element: a later execution fences it. */
  readonly epoch: number;
  /** Only `index` is read: the arguments are worked out again from the run's record (element-args.ts). */
  readonly element: DistributedElement;
}

export interface ElementResult {
  readonly step: string;
  readonly index: number;
  readonly outcome: ElementOutcome;
}

export function isElementJob(data: unknown): data is ElementJob {
  const d = data as Partial<ElementJob> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    d.v === 1 &&
    d.kind === 'element' &&
    typeof d.runId === 'string' &&
    typeof d.chain === 'string' &&
    typeof d.hash === 'string' &&
    typeof d.step === 'string' &&
    Number.isSafeInteger(d.epoch) &&
    typeof d.element === 'object' &&
    d.element !== null &&
    Number.isSafeInteger(d.element.index)
  );
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
      data: { v: 1, kind: 'element', runId: run.id, chain: run.chain, hash: run.hash, step, stepIndex: run.stepIndex, epoch: run.epoch, element } satisfies ElementJob,
      // A child that crashed every try must not leave its parent waiting for ever: the run sends that element again.
      opts: { ...JOB_OPTIONS, jobId: `${run.id}~${step}~${element.index}~e${run.epoch}`, parent: { id: job.id!, queue: job.queueQualifiedName }, ignoreDependencyOnFailure: true },
    })),
  );
  return job.moveToWaitingChildren(token);
}

/** What runs an element's call (the engine). */
export interface ElementCaller {
  chain(name: string): ChainPlan | undefined;
  callElement(chain: string, step: string, element: DistributedElement, runId: string, signal?: AbortSignal): Promise<ElementOutcome>;
}

/**
 * The element sources of the runs a worker is executing elements of, by run, epoch and step: the
 * run's record is read once per batch, not once per element. A few at a time: a worker serves
 * few parked runs at once.
 */
export class ElementSources {
  private readonly sources = new Map<string, Promise<ElementSource>>();

  constructor(private readonly max = 32) {}

  get(store: RunStore, plan: ChainPlan, run: StoredRun, step: string): Promise<ElementSource> {
    const key = `${run.id}\u0000${run.epoch}\u0000${step}\u0000${plan.hash}`;
    let source = this.sources.get(key);
    if (source === undefined) {
      source = store.getSteps(run.id).then((steps) => elementSource(plan, { chain: run.chain, input: run.input, steps }, step));
      // A read that failed is not kept: the job's retry reads again.
      source.catch(() => this.sources.delete(key));
      this.sources.set(key, source);
      if (this.sources.size > this.max) this.sources.delete(this.sources.keys().next().value!);
    }
    return source;
  }
}

/**
 * A child job: the element's call, its success recorded under the epoch that dispatched it. A job
 * is only a request (anyone who can write to Redis can add one): it runs only element `index` of a
 * distributed for_each of the chain its run records, with the arguments the plan gives that
 * element in the run's record, while that run is at the job's epoch.
 */
export async function processElement(engine: ElementCaller, store: RunStore, data: ElementJob, signal: AbortSignal, sources: ElementSources = new ElementSources(1)): Promise<ElementResult> {
  const { runId, step, element } = data;
  const answer = (outcome: ElementOutcome): ElementResult => ({ step, index: element.index, outcome });
  const refuse = (code: 'ABORTED' | 'CHAIN_CHANGED' | 'QUEUE_JOB_FAILED', message: string): ElementResult => answer({ ok: false, error: { code, message }, attempts: 0, started_at: Date.now(), duration_ms: 0 });
  const run = await store.getRun(runId);
  if (run === undefined || run.status !== 'running' || run.cancel_requested) return refuse('ABORTED', `run ${runId} is no longer running`);
  if (run.epoch !== data.epoch) return refuse('ABORTED', `element ${element.index} of '${step}' was sent by execution ${data.epoch} of run ${runId}, which is at ${run.epoch} now`);
  const plan = engine.chain(run.chain);
  if (run.chain !== data.chain) return refuse('QUEUE_JOB_FAILED', `element job for run ${runId} names chain '${data.chain}', but the run is of chain '${run.chain}'`);
  if (plan === undefined || plan.hash !== data.hash || plan.hash !== run.chain_hash) return refuse('CHAIN_CHANGED', `chain '${data.chain}' on this worker is not the one run ${runId} runs; give the workers the same chains folder`);
  const source = await sources.get(store, plan, run, step);
  if (!source.ok) return refuse('QUEUE_JOB_FAILED', `element job for run ${runId} refused: ${source.message}`);
  const planned = elementArgs(plan, source, element.index);
  if (!planned.ok) return refuse('QUEUE_JOB_FAILED', `element job for run ${runId} refused: ${planned.message}`);
  const outcome = await engine.callElement(run.chain, step, { index: element.index, args: planned.args }, runId, signal);
  if (outcome.ok) {
    const record = { key: `${step}[${element.index}]`, step, index: source.stepIndex, status: 'succeeded' as const, attempts: outcome.attempts, output: outcome.output, error: undefined, started_at: outcome.started_at, duration_ms: outcome.duration_ms };
    // Fenced (the run was taken over meanwhile) writes nothing; the outcome still reaches the run through the job.
    await store.recordSteps([{ run_id: runId, epoch: data.epoch, steps: [record] }]);
  }
  return answer(outcome);
}
