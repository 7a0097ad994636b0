import { createHash } from 'node:crypto';
import type { TriggerPlan } from '../compiler/index.js';
import { triggerPrefix } from './ticks.js';

// The run id an event (or a webhook delivery) gives a trigger: `CHAIN#TRIGGER@EVENT`, the same in
// every process, so that the store's create-if-absent makes one run of an event per trigger
// however many processes see it, and a redelivery finds the run the first delivery made.
//
// An event id is any text of 1 to 200 characters, and a run id must be a BullMQ job id (no ':')
// that reads well in a URL and a log. An id of up to 64 letters, digits, '_', '.' and '-' (not
// beginning with 'sha256-') is used as it is; any other is replaced by `sha256-` and the first
// 32 hex digits (128 bits) of its SHA-256, so `order:42` gives `sha256-…`. The two forms cannot
// meet: a plain id never begins with `sha256-`.

const PLAIN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const HASHED = 'sha256-';

/** The event's part of a run id. */
export function eventRunTail(eventId: string): string {
  if (PLAIN.test(eventId) && !eventId.startsWith(HASHED)) return eventId;
  return HASHED + createHash('sha256').update(eventId, 'utf8').digest('hex').slice(0, 32);
}

export function eventRunId(chain: string, t: Pick<TriggerPlan, 'id'>, eventId: string): string {
  return triggerPrefix(chain, t) + eventRunTail(eventId);
}
