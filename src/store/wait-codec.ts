import type { EventFilter, RecordedEvent, StoredWait, WaitFilter, WaitKind, WaitOutcome } from './wait-types.js';

// A wait, and an event, as the SQL drivers keep them: one row, JSON values as text, times and
// positions as integers (PostgreSQL's bigints arriving as strings). Shared by SQLite and PostgreSQL.

export interface WaitRow {
  readonly id: string;
  readonly run_id: string;
  readonly chain: string;
  readonly key: string;
  readonly kind: string;
  readonly name: string | null;
  readonly match: string | null;
  readonly until: number | string | null;
  readonly detail: string | null;
  readonly created_at: number | string;
  readonly outcome: string | null;
  readonly resolved_at: number | string | null;
}

export const WAIT_COLUMNS = 'id, run_id, chain, key, kind, name, match, until, detail, created_at, outcome, resolved_at';

export function waitFromRow(row: WaitRow): StoredWait {
  return {
    id: row.id,
    run_id: row.run_id,
    chain: row.chain,
    key: row.key,
    kind: row.kind as WaitKind,
    name: row.name,
    match: row.match === null ? null : (JSON.parse(row.match) as Record<string, unknown>),
    until: row.until === null ? null : Number(row.until),
    detail: row.detail === null ? null : (JSON.parse(row.detail) as unknown),
    created_at: Number(row.created_at),
    outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as WaitOutcome),
    resolved_at: row.resolved_at === null ? null : Number(row.resolved_at),
  };
}

/** The WHERE clause of a wait listing, with `?` placeholders (PostgreSQL numbers them) and its values. */
export function waitWhere(filter: WaitFilter): { readonly sql: string; readonly values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  if (filter.id !== undefined) (parts.push('id = ?'), values.push(filter.id));
  if (filter.run_id !== undefined) (parts.push('run_id = ?'), values.push(filter.run_id));
  if (filter.kind !== undefined) (parts.push('kind = ?'), values.push(filter.kind));
  if (filter.name !== undefined) (parts.push('name = ?'), values.push(filter.name));
  if (filter.open === true) parts.push('outcome IS NULL');
  if (filter.open === false) parts.push('outcome IS NOT NULL');
  return { sql: parts.length === 0 ? '' : `WHERE ${parts.join(' AND ')}`, values };
}

/** A positive whole number of waits to list, 1,000 when not given. */
export function waitLimit(limit: number | undefined): number {
  return limit !== undefined && Number.isInteger(limit) && limit > 0 ? limit : 1_000;
}

/** Whether a wait passes a filter (the drivers that filter in code: memory, Redis). */
export function waitMatches(wait: StoredWait, filter: WaitFilter): boolean {
  if (filter.id !== undefined && wait.id !== filter.id) return false;
  if (filter.run_id !== undefined && wait.run_id !== filter.run_id) return false;
  if (filter.kind !== undefined && wait.kind !== filter.kind) return false;
  if (filter.name !== undefined && wait.name !== filter.name) return false;
  if (filter.open === true && wait.outcome !== null) return false;
  if (filter.open === false && wait.outcome === null) return false;
  return true;
}

export interface EventRow {
  readonly seq: number | string;
  readonly id: string;
  readonly name: string;
  readonly payload: string | null;
  readonly at: number | string;
}

export const EVENT_COLUMNS = 'seq, id, name, payload, at';

export function eventFromRow(row: EventRow): RecordedEvent {
  return { seq: Number(row.seq), id: row.id, name: row.name, payload: row.payload === null ? null : (JSON.parse(row.payload) as unknown), at: Number(row.at) };
}

/** An event listing's position to start after (0: the oldest) and how many to give. */
export function eventRange(filter: EventFilter): { readonly after: number; readonly limit: number } {
  const after = filter.after !== undefined && Number.isFinite(filter.after) && filter.after > 0 ? Math.floor(filter.after) : 0;
  return { after, limit: waitLimit(filter.limit) };
}
