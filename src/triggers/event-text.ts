import type { TriggerEvent } from './scheduler.js';

// How a trigger event is told: a line for people (`watch`, `worker` print it) and the fields of
// a log line (`serve` logs it). A tick's events name its run; a pause's name the trigger
// (`CHAIN#ID`) and who paused it.

export function describeTriggerEvent(e: TriggerEvent): string {
  switch (e.type) {
    case 'trigger:fired':
      return `${e.type} ${e.run_id}`;
    case 'trigger:skipped':
      return `${e.type} ${e.run_id} (${e.reason})`;
    case 'trigger:paused':
      return `${e.type} ${e.chain}#${e.trigger} by ${e.by}${e.reason !== undefined ? `: ${e.reason}` : ''}`;
    case 'trigger:resumed':
      return `${e.type} ${e.chain}#${e.trigger}`;
  }
}

export function triggerLogFields(e: TriggerEvent): Record<string, unknown> {
  const base = { event: e.type, chain: e.chain, trigger: e.trigger };
  switch (e.type) {
    case 'trigger:fired':
      return { ...base, ...fireFields(e) };
    case 'trigger:skipped':
      return { ...base, ...fireFields(e), reason: e.reason, ...(e.message !== undefined ? { message: e.message } : {}) };
    case 'trigger:paused':
      return { ...base, by: e.by, paused_at: e.at, ...(e.reason !== undefined ? { reason: e.reason } : {}) };
    case 'trigger:resumed':
      return { ...base, resumed_at: e.at };
  }
}

/** The tick or the event a fire was for, and its run. */
function fireFields(e: Extract<TriggerEvent, { type: 'trigger:fired' | 'trigger:skipped' }>): Record<string, unknown> {
  return { ...(e.tick !== undefined ? { tick: e.tick } : {}), ...(e.event_id !== undefined ? { event_id: e.event_id } : {}), run_id: e.run_id };
}
