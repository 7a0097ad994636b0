import type { Clock } from '../common/clock.js';
import { ToolchainError, type ErrorCode } from '../common/errors.js';
import type { ChainPlan } from '../compiler/index.js';
import type { Observer } from '../observe/index.js';
import { countTriggerFires, registerPausedTriggers } from '../observe/trigger-metrics.js';
import type { QueueAddress } from '../queue/connection.js';
import { startQueueTriggers, type QueueTriggers } from '../queue/tick-jobs.js';
import type { SentEvent } from '../runs/deliver-event.js';
import type { RunStore } from '../store/types.js';
import { pauseTriggers, resolveTriggers, resumeTriggers, triggerKey, type PauseRequest } from '../triggers/controls.js';
import { TriggerScheduler, type FireOutcome, type TriggerEvent } from '../triggers/scheduler.js';
import { triggerViews, type TriggerUpdate, type TriggerView } from '../triggers/views.js';
import { webhookEndpoint, type WebhookEndpoint } from '../triggers/webhooks.js';

// An engine's triggers: who fires them (the in-process loop, or with a queue the queue's job
// schedulers and this process's share of their tick jobs), who hears what they did (metrics,
// `onTrigger`, `listen`), and what a caller can do with them (list, pause, resume, hand a webhook
// its delivery). The engine gives it how a tick's run starts and how an event is sent.

/** `engine.triggers`: the loaded chains' triggers (`triggers:` in a chain file). */
export interface EngineTriggerControls {
  /** Every trigger with its next 3 fire times on the engine's clock and its newest run. */
  list(): Promise<TriggerView[]>;
  /**
   * Fires what is due now on the engine's clock, and the events recorded since the last look,
   * as the engine's own loop does every `triggerIntervalMs`: for a test clock. Needs
   * `createEngine({ triggers: true })`.
   */
  fireDue(): Promise<void>;
  /**
   * Pauses a trigger (`CHAIN#ID`) or every trigger of a chain (`CHAIN`), in the run store: every
   * process firing triggers on the store fires none of its ticks until it is resumed. A trigger
   * paused already keeps its pause (`changed: false`). Unknown names are CHAIN_NOT_FOUND or
   * TRIGGER_NOT_FOUND, with a did-you-mean.
   */
  pause(target: string, request: PauseRequest): Promise<TriggerUpdate[]>;
  /** Ends the pause of a trigger or of every trigger of a chain: it fires again from now on, with no catch-up of the ticks while it was paused. */
  resume(target: string): Promise<TriggerUpdate[]>;
  /** Every trigger event of this engine's loop from now on (fired, skipped, paused, resumed); returns a function that stops listening. */
  listen(listener: (event: TriggerEvent) => void): () => void;
  /**
   * The enabled webhook trigger of the loaded chains that serves `path` (`/hooks/PATH`), to
   * hand it a delivery's raw body; undefined when none does, or when the engine fires no
   * triggers. A server's route is the usual caller.
   */
  webhook(path: string): WebhookEndpoint | undefined;
}

export interface EngineTriggerSettings {
  /** `createEngine({ triggers: true })`: this engine fires them; otherwise it only lists and pauses them. */
  readonly fire: boolean;
  /** The engine's queue, when it has one: its job schedulers carry the ticks. */
  readonly queue: QueueAddress | undefined;
  readonly store: RunStore;
  readonly clock: Clock;
  readonly observer: Observer | undefined;
  /** The loaded plans, read at each look. */
  readonly plans: () => readonly ChainPlan[];
  readonly unknownChain: (name: string) => { readonly code: ErrorCode; readonly message: string };
  /** Starts a tick's or an event's run under its derived id. */
  readonly start: (plan: ChainPlan, input: unknown, runId: string) => Promise<FireOutcome>;
  /** Sends an event (a verified webhook delivery is one). */
  readonly emit: (name: string, payload: unknown, id: string) => Promise<SentEvent>;
  readonly secrets: Readonly<Record<string, string | undefined>>;
  readonly intervalMs?: number;
  readonly onTrigger?: (event: TriggerEvent) => void;
}

export interface EngineTriggers {
  readonly controls: EngineTriggerControls;
  /** An event was recorded here: the event triggers look at once. */
  poke(): void;
  /** The chains were reloaded: a queue's job schedulers follow them at once. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

export async function startEngineTriggers(s: EngineTriggerSettings): Promise<EngineTriggers> {
  const listeners = new Set<(event: TriggerEvent) => void>();
  const count = s.fire && s.observer ? countTriggerFires(s.observer.registry) : undefined;
  const onEvent = (e: TriggerEvent): void => {
    count?.(e);
    s.onTrigger?.(e);
    for (const listener of listeners) {
      try {
        listener(e);
      } catch {
        // a listener's exception is its own problem; the loop goes on
      }
    }
  };

  let scheduler: TriggerScheduler | undefined;
  let queued: QueueTriggers | undefined;
  if (s.fire) {
    if (s.observer) {
      registerPausedTriggers(s.observer.registry, async () => {
        const loaded = new Set(s.plans().flatMap((p) => (p.triggers ?? []).map((t) => triggerKey(p.name, t))));
        return (await s.store.triggers.list()).filter((c) => c.paused !== null && loaded.has(c.key)).length;
      });
    }
    if (s.queue !== undefined) queued = await startQueueTriggers({ address: s.queue, store: s.store, clock: s.clock, plans: s.plans, start: s.start, onEvent });
    else {
      scheduler = new TriggerScheduler({
        store: s.store,
        clock: s.clock,
        plans: s.plans,
        start: s.start,
        ...(s.intervalMs !== undefined ? { intervalMs: s.intervalMs } : {}),
        onEvent,
        onError: () => undefined, // the store is away: the next look tries again
      });
      void scheduler.start();
    }
  }

  /** Pauses or resumes what `target` names, lets this engine's loop see it at once, and says how each trigger is now. */
  async function change(target: string, apply: (found: ReturnType<typeof resolveTriggers>, at: number) => Promise<{ changed: boolean }[]>): Promise<TriggerUpdate[]> {
    const plans = s.plans();
    const found = resolveTriggers(plans, target, s.unknownChain);
    const changes = await apply(found, s.clock.now());
    // This process says so (trigger:paused / trigger:resumed) and acts on it before answering.
    await scheduler?.look();
    const views = await triggerViews(plans.filter((p) => p.name === found[0]!.plan.name), s.store, s.clock.now());
    return found.map(({ trigger }, i) => ({ ...views.find((v) => v.id === trigger.id)!, changed: changes[i]!.changed }));
  }

  const controls: EngineTriggerControls = {
    list: () => triggerViews(s.plans(), s.store, s.clock.now()),
    async fireDue() {
      if (queued !== undefined) return queued.lookAll();
      if (scheduler === undefined) throw new ToolchainError('USAGE', 'this engine fires no triggers: create it with createEngine({ triggers: true })');
      await scheduler.look();
    },
    pause: (target, request) => change(target, (found, at) => pauseTriggers(s.store, found, request, at)),
    resume: (target) => change(target, (found, at) => resumeTriggers(s.store, found, at)),
    listen(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    webhook: (path) =>
      s.fire
        ? webhookEndpoint(s.plans(), path, {
            store: s.store,
            clock: s.clock,
            secret: (name) => s.secrets[name],
            emit: async (name, payload, id) => (await s.emit(name, payload, id)).new,
            start: s.start,
            onEvent,
          })
        : undefined,
  };

  return {
    controls,
    poke: () => void scheduler?.look(),
    sync: async () => {
      await queued?.sync().catch(() => undefined);
    },
    async close() {
      scheduler?.close();
      await queued?.close();
    },
  };
}
