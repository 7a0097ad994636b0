import { ToolchainError } from '../common/errors.js';
import type { RunError } from '../run-model/result.js';
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
  readonly rerun_of: string | null;
  readonly rerun_from: string | null;
}

/**
 * A run the store holds but that cannot be read back (a value that is not JSON, a status that is
 * none of ours): another program, or damage, wrote it. The drivers report it as STORE_CORRUPT
 * naming the run; a listing skips it and lists the rest (see RunFilter.onCorrupt).
 */
export class CorruptRunError extends Error {
  constructor(
    readonly runId: string,
    reason: string,
  ) {
    super(`run ${runId} cannot be read: ${reason}`);
  }
}

const STATUSES: ReadonlySet<string> = new Set(['running', 'waiting', 'succeeded', 'failed', 'compensation_failed', 'cancelled']);

/** A stored JSON value of run `id`, or CorruptRunError. */
export function storedJson(id: string, field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CorruptRunError(id, `its ${field} is not JSON (${(error as Error).message})`);
  }
}

export function storedStatus(id: string, status: string | undefined): RunStatus {
  if (status === undefined || !STATUSES.has(status)) throw new CorruptRunError(id, `its status ${JSON.stringify(status ?? null)} is none of ${[...STATUSES].join(', ')}`);
  return status as RunStatus;
}

/** STORE_CORRUPT for a run that cannot be read, naming it. */
export function corruptRun(url: string, error: CorruptRunError): ToolchainError {
  return new ToolchainError('STORE_CORRUPT', `${url}: ${error.message}`);
}

/** A listing's rows decoded; one that cannot be read is reported to `filter.onCorrupt` and left out, or (without it) fails the listing. */
export function decodeListed<R>(rows: readonly R[], decode: (row: R) => StoredRun | undefined, filter: RunFilter, url: string): StoredRun[] {
  const runs: StoredRun[] = [];
  for (const row of rows) {
    let run: StoredRun | undefined;
    try {
      run = decode(row);
    } catch (error) {
      if (!(error instanceof CorruptRunError) || filter.onCorrupt === undefined) throw error;
      filter.onCorrupt(corruptRun(url, error));
      continue;
    }
    if (run) runs.push(run);
  }
  return runs;
}

export const RUN_COLUMNS = 'id, chain, chain_hash, input, status, created_at, updated_at, finished_at, outputs, error, owner, lease_until, epoch, cancel_requested, queue, rerun_of, rerun_from';

export function runFromRow(row: RunRow): StoredRun {
  return {
    id: row.id,
    chain: row.chain,
    chain_hash: row.chain_hash,
    input: row.input === null ? undefined : storedJson(row.id, 'input', row.input),
    status: storedStatus(row.id, row.status),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    finished_at: row.finished_at === null ? null : Number(row.finished_at),
    outputs: row.outputs === null ? null : storedJson(row.id, 'outputs', row.outputs),
    error: row.error === null ? null : (storedJson(row.id, 'error', row.error) as RunError),
    owner: row.owner,
    lease_until: row.lease_until === null ? null : Number(row.lease_until),
    epoch: row.epoch,
    cancel_requested: row.cancel_requested === true || row.cancel_requested === 1,
    queue: row.queue,
    rerun_of: row.rerun_of ?? null,
    rerun_from: row.rerun_from ?? null,
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
    rerun_of: run.rerun_of ?? null,
    rerun_from: run.rerun_from ?? null,
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
  readonly columns: readonly ('status' | 'chain' | 'queue' | 'rerun_of')[];
  readonly values: readonly string[];
}

export function listShape(filter: RunFilter): ListShape {
  const columns: ('status' | 'chain' | 'queue' | 'rerun_of')[] = [];
  const values: string[] = [];
  for (const column of ['status', 'chain', 'queue', 'rerun_of'] as const) {
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
