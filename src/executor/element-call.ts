import { performCall, type CallContext, type CallOwner, type CallWatcher } from '../call/index.js';
import { ToolchainError, type StepError } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { ToolSet } from '../registry/types.js';
import type { ExecutorHost } from './types.js';

// One element of a `distribute: true` for_each, executed on whichever worker took its job
//: the step's own call site — its tool, retry, timeout and fallback — called with the
// arguments the run resolved for that element. Its outcome goes back to the run through the job;
// a success is also recorded in the store under `step[i]` by the worker.

export interface DistributedElement {
  readonly index: number;
  /** The element's arguments, as its run resolved them. */
  readonly args: Record<string, unknown>;
}

export type ElementOutcome =
  | { readonly ok: true; readonly output: unknown; readonly attempts: number; readonly started_at: number; readonly duration_ms: number }
  | { readonly ok: false; readonly error: StepError; readonly attempts: number; readonly started_at: number; readonly duration_ms: number };

/** Where a run's distributed for_each sends its elements (a queue worker gives one). */
export interface Distributor {
  /** An element workers already finished (a failure too: failures are not restored from the store). */
  outcome(step: string, index: number): ElementOutcome | undefined;
  /** Elements to run elsewhere; the run then stops with RUN_SUSPENDED and is resumed once they are done. */
  dispatch(step: string, elements: readonly DistributedElement[]): void;
}

export function callElement(host: ExecutorHost, plan: ChainPlan, tools: ToolSet, step: string, element: DistributedElement, runId: string, signal: AbortSignal | undefined): Promise<ElementOutcome> {
  const started = host.clock.now();
  const end = (outcome: { ok: true; output: unknown; attempts: number } | { ok: false; error: StepError; attempts: number }): ElementOutcome => ({ ...outcome, started_at: started, duration_ms: host.clock.now() - started });
  const i = plan.steps.findIndex((s) => s.name === step);
  const bound = host.binder.bind(plan, tools);
  if (bound instanceof ToolchainError) return Promise.resolve(end({ ok: false, error: { code: bound.code, message: bound.message }, attempts: 0 }));
  const site = i < 0 ? undefined : bound.sites[i];
  if (site === undefined) return Promise.resolve(end({ ok: false, error: { code: 'CHAIN_CHANGED', message: `chain '${plan.name}' has no tool step '${step}' to distribute` }, attempts: 0 }));
  // Cancelled before the call began (a listener added now would never be called): no call.
  if (signal?.aborted) return Promise.resolve(end({ ok: false, error: { code: 'ABORTED', message: `run ${runId} was cancelled` }, attempts: 0 }));
  return new Promise((resolve) => {
    let ctx: CallContext | undefined;
    let settled = false;
    const onAbort = (): void => ctx?.abort(new ToolchainError('ABORTED', `run ${runId} was cancelled`));
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = (outcome: ElementOutcome): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const owner: CallOwner = {
      runId,
      clock: host.clock,
      random: host.random,
      approve: undefined,
      observed: false,
      idempotencyKey: (label, item) => `${runId}:${label}${item === undefined ? '' : `[${item}]`}`,
      log: (label, attempt, message, fields, item) => host.log({ timestamp: host.clock.now(), run_id: runId, step: label, attempt, ...(item !== undefined ? { item } : {}), message, ...(fields !== undefined ? { fields } : {}) }),
    };
    const watcher: CallWatcher = {
      settlesOnAbort: false,
      live: () => !settled,
      attempt: (_k, c) => void (ctx = c),
      retrying: () => undefined,
      succeeded: (_k, output, attempts) => done(end({ ok: true, output, attempts })),
      failed: (_k, error, attempts) => done(end({ ok: false, error, attempts })),
    };
    const scope = { item: undefined, index: element.index };
    performCall({ owner, site, watcher, key: element.index, args: element.args, scope, item: element.index });
  });
}
