import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { importOptional } from '../common/optional-package.js';
import { badUrl, redact, takeOption } from './store-url.js';
import { postgresStatements, type PostgresStatements, type Query } from './postgres-sql.js';
import { preparePostgresSchema, quote } from './postgres-schema.js';
import { PostgresTriggerControls } from './postgres-trigger-controls.js';
import { PostgresWaits, type PostgresAccess } from './postgres-waits.js';
import { CorruptRunError, corruptRun, decodeListed, jsonText, listLimit, listShape, newStoredRun, runFromRow, type RunRow } from './run-codec.js';
import { encodeStep, foldSteps, MissingBlobError, parseSteps, withBlobs, type EncodedStep } from './step-codec.js';
import { isOwnError, storeError } from './store-error.js';
import type { Claim, ClaimOutcome, CreateOutcome, NewRun, RunEnd, RunFilter, RunStore, StepBatch, StoreOptions, StoredRun, StoredStep } from './types.js';
import type { StoredEvent, StoredWait, WaitFilter, WaitOutcome, WaitRequest } from './wait-types.js';

// `postgres://…` — a store that outlives machines and is shared by many engines and workers: a
// `pg` Pool, one statement (one round trip, one commit) per call. Fencing is done by the
// database (see postgres-sql.ts), so two engines on two machines can never both write a run.
//
// Durability: `full` sets synchronous_commit=on (a commit returns once the server has flushed it
// to disk: it survives a crash of the server or its machine). `normal` sets it off: the engine's
// process may die at any point without losing an acknowledged record (the server has it), but a
// crash of the PostgreSQL server itself may lose the last moments of commits (at most three times
// wal_writer_delay, 600 ms by default) — the counterpart of SQLite's NORMAL, which likewise loses
// the last commits on power loss. Nothing is ever corrupted; a lost record means its step runs
// again on resume.

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const POOL_SIZE = 10;

export async function openPostgresStore(url: URL, options: StoreOptions): Promise<RunStore> {
  const display = redact(url);
  const schema = takeOption(url, 'schema', display) ?? 'toolchain';
  if (!SCHEMA_NAME.test(schema)) throw badUrl(display, `?schema= must be a plain identifier (letters, digits, _), got '${schema}'`);
  const given = takeOption(url, 'options', display);
  const commit = `-c synchronous_commit=${options.durability === 'full' ? 'on' : 'off'}`;
  const { default: pg } = await importOptional<{ default: typeof import('pg') }>('pg');
  const pool = new pg.Pool({
    connectionString: url.href,
    max: POOL_SIZE,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    // Idle connections do not keep the process alive (a CLI that ends without closing the store).
    allowExitOnIdle: true,
    options: given ? `${given} ${commit}` : commit,
  });
  // An idle connection whose server went away reports it here; the pool drops it, and the next
  // query reports the outage to its caller. Without a listener the process would crash.
  pool.on('error', () => undefined);
  try {
    await preparePostgresSchema(pool, schema, display);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw mapPostgresError(display, 'cannot open it', error, 'read');
  }
  return new PostgresStore(pool, display, schema);
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300', '3D000', '28000', '28P01']);

function mapPostgresError(url: string, doing: string, error: unknown, op: 'read' | 'write'): Error {
  if (isOwnError(error)) return error;
  if (error instanceof CorruptRunError) return corruptRun(url, error);
  if (error instanceof MissingBlobError) return storeError('STORE_CORRUPT', url, doing, error);
  const code = String((error as { code?: unknown }).code ?? '');
  const message = error instanceof Error ? error.message : '';
  const gone =
    UNREACHABLE.has(code) ||
    code.startsWith('08') ||
    /Connection terminated|timeout exceeded when trying to connect|connection timeout|Client was closed|after calling end|not queryable/i.test(message);
  // A read-only server or session (25006: read_only_sql_transaction, also a hot standby) and a
  // full disk (53100) refuse writes, whatever the statement was part of (opening a store writes).
  const refusedWrite = code === '25006' || code === '53100';
  return storeError(refusedWrite || (!gone && op === 'write') ? 'STORE_WRITE_FAILED' : 'STORE_UNAVAILABLE', url, doing, error);
}

class PostgresStore implements RunStore {
  private readonly sql: PostgresStatements;
  readonly waits: PostgresWaits;
  readonly triggers: PostgresTriggerControls;

  constructor(
    private readonly pool: Pool,
    readonly url: string,
    schema: string,
  ) {
    this.sql = postgresStatements(quote(schema), schema);
    const access: PostgresAccess = { query: (doing, op, query, values) => this.query(doing, op, query, values), transaction: (doing, fn) => this.transaction(doing, fn) };
    this.waits = new PostgresWaits(quote(schema), access);
    this.triggers = new PostgresTriggerControls(quote(schema), access);
  }

  private async query<R extends QueryResultRow>(doing: string, op: 'read' | 'write', query: Query, values: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>({ name: query.name, text: query.text, values })).rows;
    } catch (error) {
      throw mapPostgresError(this.url, doing, error, op);
    }
  }

  /** Statements in one transaction on one connection. */
  private async transaction<T>(doing: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient | undefined;
    let failure: Error | undefined;
    try {
      client = await this.pool.connect();
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      await client?.query('ROLLBACK').catch(() => undefined);
      throw mapPostgresError(this.url, doing, error, 'write');
    } finally {
      client?.release(failure); // a connection that failed is not reused
    }
  }

  private async run(id: string, doing: string, op: 'read' | 'write'): Promise<StoredRun | undefined> {
    const row = (await this.query<RunRow>(doing, op, this.sql.run, [id]))[0];
    return row && runFromRow(row);
  }

  async createRun(run: NewRun): Promise<CreateOutcome> {
    const doing = `cannot create run ${run.id}`;
    for (;;) {
      const values = [run.id, run.chain, run.chain_hash, jsonText(run.input), run.now, run.owner, run.lease_until, run.queue ?? null, run.rerun_of ?? null, run.rerun_from ?? null];
      try {
        const added = await this.pool.query({ name: this.sql.insertRun.name, text: this.sql.insertRun.text, values });
        if (added.rowCount === 1) return { created: true, run: newStoredRun(run) };
      } catch (error) {
        throw mapPostgresError(this.url, doing, error, 'write');
      }
      const existing = await this.run(run.id, doing, 'write');
      if (existing) return { created: false, run: existing };
      // Pruned between the two statements: try again.
    }
  }

  async claimRun(id: string, claim: Claim): Promise<ClaimOutcome> {
    const doing = `cannot claim run ${id}`;
    const row = (await this.query<RunRow>(doing, 'write', this.sql.claim, [id, claim.expected_epoch, claim.owner, claim.lease_until, claim.now, claim.queue ?? null]))[0];
    if (row) return { claimed: true, run: runFromRow(row) };
    return { claimed: false, run: await this.run(id, doing, 'write') };
  }

  async recordSteps(batches: readonly StepBatch[]): Promise<readonly ('ok' | 'fenced')[]> {
    const doing = 'cannot record step results';
    const encoded = batches.map((batch) => {
      try {
        return batch.steps.map(encodeStep);
      } catch (error) {
        throw storeError('STORE_WRITE_FAILED', this.url, doing, error); // an output JSON cannot carry
      }
    });
    const blobs = new Map<string, string>();
    for (const steps of encoded) for (const step of steps) if (step.blob) blobs.set(step.blob.hash, step.blob.json);
    const only = batches.length === 1 ? batches[0] : undefined;
    if (only && blobs.size === 0) {
      const steps = encoded[0]!.length === 1 ? encoded[0]! : foldSteps(encoded[0]!.map((step) => ({ step })), (e) => e.step.key).map((e) => e.step);
      const columns = [steps.map((s) => s.key), steps.map((s) => s.status), steps.map((s) => s.json)];
      const end = only.end;
      const [row] =
        end !== undefined
          ? await this.query<{ owned: number }>(doing, 'write', this.sql.recordFinish, [only.run_id, only.epoch, ...columns, end.status, jsonText(end.outputs ?? null), jsonText(end.error ?? null), end.finished_at])
          : steps.length === 1
            ? await this.query<{ owned: number }>(doing, 'write', this.sql.recordStep, [only.run_id, only.epoch, steps[0]!.key, steps[0]!.status, steps[0]!.json])
            : await this.query<{ owned: number }>(doing, 'write', this.sql.recordOne, [only.run_id, only.epoch, ...columns]);
      return [row?.owned === 1 ? 'ok' : 'fenced'];
    }
    if (batches.length === 0) return [];
    const results = await this.recordGroup(doing, batches, encoded, blobs);
    // The ends of several runs (or of one with big outputs) follow their steps: one more statement.
    const ending = batches.flatMap((batch, i) => (batch.end !== undefined && results[i] === 'ok' ? [{ i, batch, end: batch.end }] : []));
    if (ending.length > 0) {
      const values = [
        ending.map((e) => e.batch.run_id),
        ending.map((e) => e.batch.epoch),
        ending.map((e) => e.end.status),
        ending.map((e) => jsonText(e.end.outputs ?? null)),
        ending.map((e) => jsonText(e.end.error ?? null)),
        ending.map((e) => e.end.finished_at),
      ];
      const finished = new Set((await this.query<{ id: string }>('cannot finish runs', 'write', this.sql.finishMany, values)).map((r) => r.id));
      for (const e of ending) if (!finished.has(e.batch.run_id)) results[e.i] = 'fenced';
    }
    return results;
  }

  /** Several runs' steps (or steps with big outputs) in one statement. */
  private async recordGroup(doing: string, batches: readonly StepBatch[], encoded: readonly (readonly EncodedStep[])[], blobs: ReadonlyMap<string, string>): Promise<('ok' | 'fenced')[]> {
    // Two batches of one run (and epoch) in one call are one run's steps: folded together.
    const flat = foldSteps(
      encoded.flatMap((steps, i) => steps.map((step) => ({ n: i + 1, step }))),
      (e) => `${batches[e.n - 1]!.run_id}\u0000${batches[e.n - 1]!.epoch}\u0000${e.step.key}`,
    );
    const values = [
      batches.map((b) => b.run_id),
      batches.map((b) => b.epoch),
      flat.map((f) => f.n),
      flat.map((f) => f.step.key),
      flat.map((f) => f.step.status),
      flat.map((f) => f.step.json),
      flat.map((f) => f.step.blob?.hash ?? null),
    ];
    const rows =
      blobs.size === 0
        ? await this.query<{ n: number }>(doing, 'write', this.sql.recordMany, values)
        : await this.transaction(doing, async (client) => {
            await client.query('SELECT pg_advisory_xact_lock_shared(hashtext($1))', [this.sql.blobLock]);
            return (await client.query<{ n: number }>({ ...this.sql.recordBlobs, values: [...values, [...blobs.keys()], [...blobs.values()]] })).rows;
          });
    const owned = new Set(rows.map((r) => r.n));
    return batches.map((_, i) => (owned.has(i + 1) ? 'ok' : 'fenced'));
  }

  async finishRun(id: string, epoch: number, end: RunEnd): Promise<'ok' | 'fenced'> {
    const values = [id, epoch, end.status, jsonText(end.outputs ?? null), jsonText(end.error ?? null), end.finished_at];
    try {
      const result = await this.pool.query({ name: this.sql.finish.name, text: this.sql.finish.text, values });
      return result.rowCount === 1 ? 'ok' : 'fenced';
    } catch (error) {
      throw mapPostgresError(this.url, `cannot finish run ${id}`, error, 'write');
    }
  }

  async renewLease(id: string, epoch: number, leaseUntil: number, now: number): Promise<{ result: 'ok' | 'fenced'; cancel_requested: boolean }> {
    const doing = `cannot renew the lease of run ${id}`;
    const renewed = (await this.query<{ cancel_requested: boolean }>(doing, 'write', this.sql.renew, [id, epoch, leaseUntil, now]))[0];
    if (renewed) return { result: 'ok', cancel_requested: renewed.cancel_requested };
    const current = (await this.query<{ cancel_requested: boolean }>(doing, 'write', this.sql.cancelFlag, [id]))[0];
    return { result: 'fenced', cancel_requested: current?.cancel_requested ?? false };
  }

  async requestCancel(id: string, now: number): Promise<StoredRun | undefined> {
    const row = (await this.query<RunRow>(`cannot cancel run ${id}`, 'write', this.sql.cancel, [id, now]))[0];
    return row && runFromRow(row);
  }

  getRun(id: string): Promise<StoredRun | undefined> {
    return this.run(id, `cannot read run ${id}`, 'read');
  }

  async getSteps(id: string): Promise<readonly StoredStep[]> {
    const doing = `cannot read the steps of run ${id}`;
    const rows = await this.query<{ record: string; blob: string | null }>(doing, 'read', this.sql.steps, [id]);
    const found = new Map<string, string>();
    const parsed = parseSteps(rows.map((r) => r.record));
    if (parsed.blobs.length > 0) {
      // The blob column is the text of the blob the same row's record names.
      rows.forEach((r, i) => {
        const hash = parsed.steps[i]?.['$blob'];
        if (typeof hash === 'string' && r.blob !== null) found.set(hash, r.blob);
      });
    }
    try {
      return withBlobs(parsed, found);
    } catch (error) {
      throw mapPostgresError(this.url, doing, error, 'read');
    }
  }

  async listRuns(filter: RunFilter = {}): Promise<readonly StoredRun[]> {
    const limit = listLimit(filter.limit);
    const shape = listShape(filter);
    return decodeListed(await this.query<RunRow>('cannot list runs', 'read', this.sql.list(shape), [...shape.values, limit]), runFromRow, filter, this.url);
  }

  prune(finishedBefore: number): Promise<number> {
    return this.transaction('cannot prune runs', async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.sql.blobLock]);
      const deleted = await client.query<{ n: number }>(this.sql.pruneRuns, [finishedBefore]);
      // After the steps are gone (a data-modifying WITH's changes are not visible to its own statement).
      await client.query(this.sql.pruneBlobs);
      await this.waits.pruneEvents(client, finishedBefore);
      return deleted.rows[0]?.n ?? 0;
    });
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
