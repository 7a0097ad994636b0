// The store's part of operating triggers: which triggers people paused, by whom and when, and
// when each was last resumed. A trigger is named by its key, `CHAIN#ID` (the prefix of its runs'
// ids without the `@TICK`). The record lives in the store, not in a process, so that every process
// that fires triggers on the store honours a pause made by any other (the CLI, a server, a
// program). A pause is first writer wins: pausing a paused trigger keeps the record it has, so
// the first person's name and reason stay until someone resumes it. Resuming clears the pause and
// keeps the time: a process that was not running meanwhile learns from it that the ticks before
// it were paused ones, not missed ones.

export interface TriggerPause {
  /** Who paused it (a person's name, `token`, `local`, an OS user). */
  readonly by: string;
  /** Milliseconds since the epoch. */
  readonly at: number;
  readonly reason?: string;
}

export interface TriggerControl {
  /** `CHAIN#ID` */
  readonly key: string;
  /** Null while it is not paused. */
  readonly paused: TriggerPause | null;
  /** When it was last resumed (milliseconds since the epoch); null: never. */
  readonly resumed_at: number | null;
}

export interface TriggerChange {
  /** The record as it is afterwards. */
  readonly control: TriggerControl;
  /** False when there was nothing to do: pausing a paused trigger, resuming one that was not paused. */
  readonly changed: boolean;
}

export interface TriggerControlStore {
  /** Pauses the trigger unless it is paused already (then its record is kept as it is). */
  pause(key: string, pause: TriggerPause): Promise<TriggerChange>;
  /** Ends its pause and records `at` as its resume; a trigger that is not paused is left alone. */
  resume(key: string, at: number): Promise<TriggerChange>;
  /** Every trigger with a record (paused now, or resumed once), by key. */
  list(): Promise<readonly TriggerControl[]>;
}

/** The record of a key the store has nothing of. */
export function noControl(key: string): TriggerControl {
  return { key, paused: null, resumed_at: null };
}

/** A record from its columns (SQL drivers and Redis store them as flat fields). */
export function controlFromFields(key: string, f: { paused_by: string | null; paused_at: number | string | null; reason: string | null; resumed_at: number | string | null }): TriggerControl {
  const paused: TriggerPause | null =
    f.paused_at === null || f.paused_by === null ? null : { by: f.paused_by, at: Number(f.paused_at), ...(f.reason !== null ? { reason: f.reason } : {}) };
  return { key, paused, resumed_at: f.resumed_at === null ? null : Number(f.resumed_at) };
}
