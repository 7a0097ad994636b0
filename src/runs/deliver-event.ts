import { randomUUID } from 'node:crypto';
import type { Clock } from '../common/clock.js';
import { ToolchainError } from '../common/errors.js';
import { isRecord } from '../common/json.js';
import { jsonEqual } from '../expr/json-equal.js';
import type { RunStore } from '../store/types.js';

// Sending an event: it is kept in the run store by id (a second send of the same id does
// nothing, also for waits that began after the first), then delivered to every open wait for
// its name whose `match` it meets, each wait ended once (first writer wins) and its run made
// due. An event no wait is open for is kept, not queued: a wait that begins later does not see it.

export interface SentEvent {
  readonly id: string;
  /** false: an event with this id was sent before; nothing was delivered now. */
  readonly new: boolean;
  /** The runs whose waits it ended. */
  readonly delivered: readonly string[];
}

/** Most waits one event is delivered to in one pass (a wait left over gets the next send of it, not this one: say so). */
const DELIVERY_LIMIT = 100_000;

export async function deliverEvent(store: RunStore, clock: Clock, name: string, payload: unknown, id?: string): Promise<SentEvent> {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) throw new ToolchainError('USAGE', 'an event needs a name (1 to 200 characters)');
  if (id !== undefined && (typeof id !== 'string' || id.length === 0 || id.length > 200)) throw new ToolchainError('USAGE', "an event's id must be 1 to 200 characters");
  const eventId = id ?? randomUUID();
  const now = clock.now();
  const fresh = await store.waits.recordEvent({ id: eventId, name, payload: payload ?? null, at: now });
  if (!fresh) return { id: eventId, new: false, delivered: [] };
  const delivered: string[] = [];
  for (const wait of await store.waits.listWaits({ kind: 'event', name, open: true, limit: DELIVERY_LIMIT })) {
    if (!matches(wait.match, payload)) continue;
    const ended = await store.waits.resolveWait(wait.id, { ok: true, value: payload ?? null }, now);
    if (ended?.first) delivered.push(wait.run_id);
  }
  return { id: eventId, new: true, delivered };
}

/** Each key of `match` equals the payload's value at that key (JSON equality). */
export function matches(match: Readonly<Record<string, unknown>> | null, payload: unknown): boolean {
  if (match === null) return true;
  const keys = Object.keys(match);
  if (keys.length === 0) return true;
  if (!isRecord(payload)) return false;
  return keys.every((k) => Object.hasOwn(payload, k) && jsonEqual(payload[k], match[k]));
}
