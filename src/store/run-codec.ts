import { ToolchainError } from '../common/errors.js';
import type { RunError } from '../executor/events.js';
import type { NewRun, RunFilter, RunStatus, StoredRun } from './types.js';

// A run as the drivers keep it. In the SQL drivers it is a row (SQLite and PostgreSQL share the
// columns): JSON values as text, times as integers, the cancel flag as 0/1 (SQLite) or a boolean
// (PostgreSQL), and PostgreSQL's bigints arriving as strings.

export interface RunRow {
  readonly id: string;
  readonly chain: string;
  readonly chain_hash: string;
  readonly input: string | null;
  readonly status: string;
  readonly created_at: number | string;
  readonly updated_at: number | string;
  readonly finished_at: number | string | null;
  readonly outputs: string | null;
  readonly error: string | null;
  readonly owner: string | null;
  readonly lease_until: number | string | null;
  readonly epoch: number;
  readonly cancel_requested: number | boolean;
  readonly queue: string | null;
}

export const RUN_COLUMNS = 'id, chain, chain_hash, input, status, created_at, updated_at, finished_at, outputs, error, owner, lease_until, epoch, cancel_requested, queue';

export function runFromRow(row: RunRow): StoredRun {
  return {
    id: row.id,
    chain: row.chain,
    chain_hash: row.chain_hash,
    input: row.input === null ? undefined : JSON.parse(row.input),
    status: row.status as RunStatus,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    finished_at: row.finished_at === null ? null : Number(row.finished_at),
    outputs: row.outputs === null ? null : JSON.parse(row.outputs),
    error: row.error === null ? null : (JSON.parse(row.error) as RunError),
    owner: row.owner,
    lease_until: row.lease_until === null ? null : Number(row.lease_until),
    epoch: row.epoch,
    cancel_requested: row.cancel_requested === true || row.cancel_requested === 1,
    queue: row.queue,
  };
}

/** The run createRun makes: running, owned, epoch 1. */
export function newStoredRun(run: NewRun): StoredRun {
  return {
    id: run.id,
    chain: run.chain,
    chain_hash: run.chain_hash,
    input: run.input,
    status: 'running',
    created_at: run.now,
    updated_at: run.now,
    finished_at: null,
    outputs: null,
    error: null,
    owner: run.owner,
    lease_until: run.lease_until,
    epoch: 1,
    cancel_requested: false,
    queue: run.queue ?? null,
  };
}

/** JSON text for a column; NULL for nothing (undefined; a JSON null stays `null`). */
export function jsonText(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

/** The columns a listing filters on (those the filter gives, in one order) and their values. */
export interface ListShape {
  /** Names the shape: one prepared statement per shape. */
  readonly key: string;
  readonly columns: readonly ('status' | 'chain' | 'queue')[];
  readonly values: readonly string[];
}

export function listShape(filter: RunFilter): ListShape {
  const columns: ('status' | 'chain' | 'queue')[] = [];
  const values: string[] = [];
  for (const column of ['status', 'chain', 'queue'] as const) {
    const value = filter[column];
    if (value === undefined) continue;
    columns.push(column);
    values.push(value);
  }
  return { key: columns.length === 0 ? 'all' : columns.join('_'), columns, values };
}

/** A positive whole number of runs to list, 50 when not given. */
export function listLimit(limit: number | undefined): number {
  if (limit === undefined) return 50;
  if (!Number.isInteger(limit) || limit < 1) throw new ToolchainError('USAGE', `limit: expected a whole number of at least 1, got ${String(limit)}`);
  return limit;
}
