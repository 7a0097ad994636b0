import { createHash } from 'node:crypto';
import type { Clock } from '../common/clock.js';
import { ToolchainError } from '../common/errors.js';
import { isRecord } from '../common/json.js';
import type { ChainPlan, TriggerPlan, WebhookPlan } from '../compiler/index.js';
import type { RunStore } from '../store/types.js';
import { triggerKey } from './controls.js';
import { eventRunId, eventRunTail } from './event-runs.js';
import type { FireOutcome, TriggerEvent } from './scheduler.js';
import { header, verifySignature, type Headers } from './webhook-signatures.js';

// Webhook triggers (`- webhook: { path, signature, secret_env }`): what `POST /hooks/PATH` does
// with a delivery once the server has its raw body. In order, and nothing before the signature:
//
// 1. The secret is read from the environment (the variable `secret_env` names) when the delivery
//    comes; without it nothing can be verified (WEBHOOK_SECRET_MISSING).
// 2. The signature is checked against the raw body (webhook-signatures.ts): a bad or missing one
//    is WEBHOOK_SIGNATURE, and nothing is recorded or started.
// 3. A paused trigger refuses the delivery (TRIGGER_PAUSED): nothing is recorded, so the
//    sender's redelivery once it is resumed starts the run.
// 4. The delivery id: GitHub's X-GitHub-Delivery, the Stripe event's `id`, for hmac-sha256 the
//    trigger's `id_header` — or, where there is none, the SHA-256 of the body.
// 5. The delivery is recorded as the event `webhook.PATH` (its payload the body), under an id
//    made of the path and the delivery id: the first time it is new, a redelivery is not. Waits
//    for that event receive it, like any event.
// 6. The trigger's run, under the id the delivery id gives it (event-runs.ts), is started unless
//    the store has it: so a redelivery starts nothing and answers the same run id, and one
//    whose first delivery was recorded but not started (the server died between) starts it.

export interface WebhookDelivery {
  /** The raw body, as received. */
  readonly body: Buffer;
  /** The request's headers, names in lower case (as Node gives them). */
  readonly headers: Headers;
}

export interface WebhookReceipt {
  /** false: this delivery id came before; nothing new was started. */
  readonly new: boolean;
  readonly delivery_id: string;
  readonly run_ids: readonly string[];
}

/** The one enabled webhook trigger of a path, ready to receive deliveries. */
export interface WebhookEndpoint {
  readonly chain: string;
  readonly trigger: string;
  readonly path: string;
  readonly signature: WebhookPlan['signature'];
  readonly maxBodyBytes: number;
  /** The variable that holds the secret is set: deliveries can be verified. */
  readonly ready: boolean;
  /** Verifies, records and starts (see above); throws WEBHOOK_SECRET_MISSING, WEBHOOK_SIGNATURE, WEBHOOK_BAD_DELIVERY or INPUT_INVALID. */
  receive(delivery: WebhookDelivery): Promise<WebhookReceipt>;
}

export interface WebhookSettings {
  readonly store: RunStore;
  readonly clock: Clock;
  /** A secret by its variable's name (the server's environment). */
  readonly secret: (name: string) => string | undefined;
  /** Records the event (and delivers it to the waits for it); false when its id was recorded before. */
  readonly emit: (name: string, payload: unknown, id: string) => Promise<boolean>;
  readonly start: (plan: ChainPlan, input: unknown, runId: string) => Promise<FireOutcome>;
  readonly onEvent?: (event: TriggerEvent) => void;
}

/**
 * The headers a run may read as `$.event.headers`: what says what the delivery is, never what
 * authenticates it (no signature, cookie or authorization header).
 */
const SHOWN_HEADERS = ['content-type', 'user-agent', 'x-github-event', 'x-github-delivery', 'x-github-hook-id', 'x-github-hook-installation-target-id', 'x-github-hook-installation-target-type', 'x-request-id'];

/** The longest delivery id taken as it is; a longer one is its hash. */
const MAX_ID = 200;

/** The event a webhook's deliveries are recorded as. */
export const webhookEventName = (path: string): string => `webhook.${path}`;

/** The enabled webhook trigger of the plans that serves `path` (the first, should two: the chains folder refuses that). */
export function findWebhook(plans: readonly ChainPlan[], path: string): { plan: ChainPlan; trigger: TriggerPlan & { webhook: WebhookPlan } } | undefined {
  for (const plan of plans) {
    for (const trigger of plan.triggers ?? []) {
      if (trigger.enabled && trigger.webhook?.path === path) return { plan, trigger: trigger as TriggerPlan & { webhook: WebhookPlan } };
    }
  }
  return undefined;
}

export function webhookEndpoint(plans: readonly ChainPlan[], path: string, s: WebhookSettings): WebhookEndpoint | undefined {
  const found = findWebhook(plans, path);
  if (found === undefined) return undefined;
  const { plan, trigger: t } = found;
  const w = t.webhook;
  const secret = (): string | undefined => {
    const value = s.secret(w.secretEnv);
    return value === undefined || value === '' ? undefined : value;
  };
  return {
    chain: plan.name,
    trigger: t.id,
    path: w.path,
    signature: w.signature,
    maxBodyBytes: w.maxBodyBytes,
    ready: secret() !== undefined,
    async receive({ body, headers }) {
      const key = secret();
      if (key === undefined) throw new ToolchainError('WEBHOOK_SECRET_MISSING', `webhook /hooks/${w.path} (chain '${plan.name}', trigger ${t.id}) cannot verify deliveries: ${w.secretEnv}, the variable of its secret, is not set in the server's environment`);
      const check = verifySignature(w, key, body, headers, s.clock.now());
      if (!check.ok) throw new ToolchainError('WEBHOOK_SIGNATURE', `the delivery to /hooks/${w.path} is not signed with the trigger's secret: ${check.reason}`);
      // Paused: refused, and nothing recorded, so that the sender's redelivery after the resume starts the run.
      const control = (await s.store.triggers.list()).find((c) => c.key === triggerKey(plan.name, t));
      if (control?.paused) throw new ToolchainError('TRIGGER_PAUSED', `trigger ${triggerKey(plan.name, t)} (webhook /hooks/${w.path}) is paused (by ${control.paused.by}): the delivery was not taken; send it again once the trigger is resumed`);
      const payload = parseBody(body, header(headers, 'content-type'));
      const deliveryId = deliveryIdOf(w, body, headers, payload);
      const name = webhookEventName(w.path);
      const fresh = await s.emit(name, payload, `${name}/${eventRunTail(deliveryId)}`);
      const runId = eventRunId(plan.name, t, deliveryId);
      if ((await s.store.getRun(runId)) === undefined) {
        const event = { name, id: deliveryId, type: typeOf(w, headers, payload), payload, headers: shownHeaders(w, headers) };
        const input = t.input?.get({ event }) ?? {};
        const outcome = await s.start(plan, input, runId);
        const base = { chain: plan.name, trigger: t.id, event_id: deliveryId, run_id: runId, timestamp: s.clock.now() };
        if (outcome === 'fired') s.onEvent?.({ type: 'trigger:fired', ...base });
        else if (typeof outcome === 'object') {
          s.onEvent?.({ type: 'trigger:skipped', ...base, reason: 'refused', message: outcome.refused });
          throw new ToolchainError('INPUT_INVALID', `chain '${plan.name}' refused the input the delivery gives it (${outcome.refused}): no run was started; fix the trigger's input_map, then have the delivery sent again`);
        }
      }
      return { new: fresh, delivery_id: deliveryId, run_ids: [runId] };
    },
  };
}

/** The body as JSON when it is JSON (a form's `payload` field, as GitHub can send it), else its text. */
function parseBody(body: Buffer, contentType: string | undefined): unknown {
  const text = body.toString('utf8');
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(text);
    const inner = form.get('payload');
    if (inner !== null) {
      try {
        return JSON.parse(inner) as unknown;
      } catch {
        return inner;
      }
    }
    return Object.fromEntries(form);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function bodyHash(body: Buffer): string {
  return `sha256-${createHash('sha256').update(body).digest('hex')}`;
}

function usable(id: string | undefined): id is string {
  return id !== undefined && id.trim() !== '' && id.length <= MAX_ID;
}

function deliveryIdOf(w: WebhookPlan, body: Buffer, headers: Headers, payload: unknown): string {
  switch (w.signature) {
    case 'github': {
      const id = header(headers, 'x-github-delivery');
      return usable(id) ? id.trim() : bodyHash(body);
    }
    case 'stripe': {
      const id = isRecord(payload) && typeof payload.id === 'string' ? payload.id : undefined;
      if (!usable(id)) throw new ToolchainError('WEBHOOK_BAD_DELIVERY', `the delivery to /hooks/${w.path} is signed, but its body is not a Stripe event: a JSON object with an 'id' (1 to ${MAX_ID} characters)`);
      return id;
    }
    case 'hmac-sha256': {
      const id = w.idHeader !== undefined ? header(headers, w.idHeader) : undefined;
      return usable(id) ? id.trim() : bodyHash(body);
    }
  }
}

/** What kind of delivery it is, where the sender says: GitHub's X-GitHub-Event, the Stripe event's `type`. */
function typeOf(w: WebhookPlan, headers: Headers, payload: unknown): string | null {
  if (w.signature === 'github') return header(headers, 'x-github-event') ?? null;
  if (w.signature === 'stripe') return isRecord(payload) && typeof payload.type === 'string' ? payload.type : null;
  return null;
}

function shownHeaders(w: WebhookPlan, headers: Headers): Record<string, string> {
  const names = w.idHeader !== undefined ? [...SHOWN_HEADERS, w.idHeader] : SHOWN_HEADERS;
  const shown: Record<string, string> = {};
  for (const name of names) {
    if (name === w.header) continue; // never the signature
    const value = header(headers, name);
    if (value !== undefined) shown[name] = value;
  }
  return shown;
}
