import { didYouMean, suggestionSuffix, ToolchainError, type ErrorCode } from '../common/errors.js';
import type { ChainPlan, TriggerPlan } from '../compiler/index.js';
import type { RunStore } from '../store/types.js';
import type { TriggerChange } from '../store/trigger-control-types.js';

// Pausing and resuming triggers, as the CLI, the server and the library ask for it: a target
// names one trigger (`CHAIN#ID`) or every trigger of a chain (`CHAIN`), resolved against the
// loaded chains so that a mistyped name is refused with a did-you-mean instead of recording a
// pause nothing would ever read. The pause itself is the store's record (store.triggers), read by
// every process that fires triggers; `CHAIN` alone records one pause per trigger the chain has
// now (a trigger added to the chain later is not paused).

/** Longest `by` and `reason` kept. */
export const MAX_BY = 200;
export const MAX_REASON = 1000;

export interface PauseRequest {
  /** Who pauses: a person's name, `token`, `local`, an OS user. */
  readonly by: string;
  readonly reason?: string;
}

/** `CHAIN#ID`: how a trigger is named for pausing (its runs' ids start with it and `@`). */
export function triggerKey(chain: string, t: Pick<TriggerPlan, 'id'>): string {
  return `${chain}#${t.id}`;
}

/**
 * The triggers a target names, in the chain's order. `unknownChain` says why a name is no loaded
 * chain (with a did-you-mean, or the chain file's problem); an unknown id or a chain without
 * triggers is TRIGGER_NOT_FOUND.
 */
export function resolveTriggers(
  plans: readonly ChainPlan[],
  target: string,
  unknownChain: (name: string) => { readonly code: ErrorCode; readonly message: string },
): { plan: ChainPlan; trigger: TriggerPlan }[] {
  const hash = target.indexOf('#');
  const chain = hash < 0 ? target : target.slice(0, hash);
  const id = hash < 0 ? undefined : target.slice(hash + 1);
  const plan = plans.find((p) => p.name === chain);
  if (plan === undefined) {
    const { code, message } = unknownChain(chain);
    throw new ToolchainError(code, message);
  }
  const triggers = plan.triggers ?? [];
  if (triggers.length === 0) throw new ToolchainError('TRIGGER_NOT_FOUND', `chain '${chain}' declares no triggers`);
  if (id === undefined) return triggers.map((trigger) => ({ plan, trigger }));
  const trigger = triggers.find((t) => t.id === id);
  if (trigger === undefined) {
    const ids = triggers.map((t) => t.id);
    throw new ToolchainError('TRIGGER_NOT_FOUND', `chain '${chain}' has no trigger '${id}' (its triggers: ${ids.map((i) => `${chain}#${i}`).join(', ')})${suggestionSuffix(didYouMean(id, ids))}`);
  }
  return [{ plan, trigger }];
}

/** Refuses a pause with no one's name, or with a name or reason too long to keep. */
export function checkPauseRequest(request: PauseRequest): void {
  if (typeof request.by !== 'string' || request.by.trim() === '') throw new ToolchainError('USAGE', 'a pause needs the name of who pauses (by)');
  if (request.by.length > MAX_BY) throw new ToolchainError('USAGE', `the name of who pauses is ${request.by.length} characters long; at most ${MAX_BY} are kept`);
  if (request.reason !== undefined && request.reason.length > MAX_REASON) throw new ToolchainError('USAGE', `the reason is ${request.reason.length} characters long; at most ${MAX_REASON} are kept`);
}

/** Pauses each of the triggers (those paused already keep their record). */
export async function pauseTriggers(store: RunStore, triggers: readonly { plan: ChainPlan; trigger: TriggerPlan }[], request: PauseRequest, at: number): Promise<TriggerChange[]> {
  checkPauseRequest(request);
  const reason = request.reason?.trim() === '' ? undefined : request.reason;
  const changes: TriggerChange[] = [];
  for (const { plan, trigger } of triggers) changes.push(await store.triggers.pause(triggerKey(plan.name, trigger), { by: request.by, at, ...(reason !== undefined ? { reason } : {}) }));
  return changes;
}

/** Resumes each of the triggers (those not paused are left alone). */
export async function resumeTriggers(store: RunStore, triggers: readonly { plan: ChainPlan; trigger: TriggerPlan }[], at: number): Promise<TriggerChange[]> {
  const changes: TriggerChange[] = [];
  for (const { plan, trigger } of triggers) changes.push(await store.triggers.resume(triggerKey(plan.name, trigger), at));
  return changes;
}
