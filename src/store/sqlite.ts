import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { ToolchainError } from '../common/errors.js';
import { CorruptRunError, corruptRun, decodeListed, jsonText, listLimit, listShape, newStoredRun, RUN_COLUMNS, runFromRow, type RunRow } from './run-codec.js';
import { prepareSqliteSchema } from './sqlite-schema.js';
import { SqliteTriggerControls } from './sqlite-trigger-controls.js';
import { SqliteWaits, type SqliteAccess } from './sqlite-waits.js';
import { encodeStep, MissingBlobError, parseSteps, withBlobs, type EncodedStep } from './step-codec.js';
import { isOwnError, storeError } from './store-error.js';
import type { Claim, ClaimOutcome, CreateOutcome, NewRun, RunEnd, RunFilter, RunStore, StepBatch, StoreOptions, StoredRun, StoredStep } from './types.js';
import type { StoredEvent, StoredWait, WaitFilter, WaitOutcome, WaitRequest } from './wait-types.js';

// `sqlite:FILE` — the CLI's default store: better-sqlite3 12 (13 crashes on Node 20) in WAL mode.
// `synchronous=NORMAL` survives a crash of the process (a commit is in the operating system's
// hands); `durability: 'full'` syncs every commit to the disk (FULL) and survives power loss.
// Several processes may share a file: writers take SQLite's write lock up front (BEGIN IMMEDIATE)
// and wait for it up to BUSY_TIMEOUT_MS. Every write of one call is one transaction, so a batch
// of step results costs one commit.

const BUSY_TIMEOUT_MS = 5_000;

export async function openSqliteStore(file: string, url: string, options: StoreOptions): Promise<RunStore> {
  // better-sqlite3 is CommonJS: require() loads it as is, where import() would first scan its
  // source for exports (cjs-module-lexer, 3-4 ms of every CLI run). Loaded here, when a SQLite
  // store is opened, not when this module is.
  const Sqlite = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  try {
    mkdirSync(dirname(resolve(file)), { recursive: true });
  } catch (error) {
    throw storeError('STORE_WRITE_FAILED', url, 'cannot create its folder', error);
  }
  let db: BetterSqlite3.Database;
  try {
    db = new Sqlite(file, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw mapSqliteError(url, 'cannot open it', error, 'open');
  }
  try {
    prepareSqliteSchema(db, url);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`);
    return new SqliteStore(db, url);
  } catch (error) {
    db.close();
    throw mapSqliteError(url, 'cannot open it', error, 'open');
  }
}

/** A better-sqlite3 error (code SQLITE_*) as one of ours. */
function mapSqliteError(url: string, doing: string, error: unknown, op: 'open' | 'read' | 'write'): Error {
  if (isOwnError(error)) return error;
  if (error instanceof CorruptRunError) return corruptRun(url, error);
  const code = String((error as { code?: unknown }).code ?? '');
  if (code === 'SQLITE_NOTADB') return new ToolchainError('STORE_CORRUPT', `${url} is not a toolchain run store (not an SQLite database); give the store a file of its own`);
  if (code.startsWith('SQLITE_CORRUPT') || error instanceof MissingBlobError) return storeError('STORE_CORRUPT', url, `${doing}: the file is damaged`, error);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return storeError('STORE_UNAVAILABLE', url, `${doing}: another process held its write lock for more than ${BUSY_TIMEOUT_MS / 1000} s`, error);
  }
  if (error instanceof TypeError && /not open/.test(error.message)) return storeError('STORE_UNAVAILABLE', url, `${doing}: the store is closed`);
  const writing = op === 'write' || code.startsWith('SQLITE_READONLY') || code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR');
  return storeError(writing ? 'STORE_WRITE_FAILED' : 'STORE_UNAVAILABLE', url, doing, error);
}

/** The runs prune deletes: those that finished before a time (given twice). */
const PRUNED = "created_at < ? AND finished_at < ? AND status <> 'running'";

interface Statements {
  readonly insertRun: BetterSqlite3.Statement;
  readonly run: BetterSqlite3.Statement<[string], RunRow>;
  readonly claim: BetterSqlite3.Statement<unknown[], RunRow>;
  readonly epoch: BetterSqlite3.Statement<[string], number>;
  readonly insertStep: BetterSqlite3.Statement;
  readonly recordOwned: BetterSqlite3.Statement;
  readonly insertBlob: BetterSqlite3.Statement;
  readonly finish: BetterSqlite3.Statement;
  readonly renew: BetterSqlite3.Statement<unknown[], number>;
  readonly cancelFlag: BetterSqlite3.Statement<[string], number>;
  readonly cancel: BetterSqlite3.Statement;
  readonly steps: BetterSqlite3.Statement<[string], string>;
  readonly blob: BetterSqlite3.Statement<[string], string>;
  /** A listing's statement for a shape of filter (run-codec.ts; `succeeded`: its status is), prepared when first asked for. */
  readonly list: (key: string, columns: readonly string[], succeeded: boolean) => BetterSqlite3.Statement<unknown[], RunRow>;
  readonly pruneSteps: BetterSqlite3.Statement;
  readonly pruneRuns: BetterSqlite3.Statement;
  readonly pruneBlobs: BetterSqlite3.Statement;
}

function prepare(db: BetterSqlite3.Database): Statements {
  const lists = new Map<string, BetterSqlite3.Statement<unknown[], RunRow>>();
  const list = (key: string, columns: readonly string[], succeeded: boolean): BetterSqlite3.Statement<unknown[], RunRow> => {
    const shape = succeeded ? `${key}:succeeded` : key;
    let statement = lists.get(shape);
    if (statement === undefined) {
      // runs_by_status holds no succeeded run: a listing of another status says so, or SQLite cannot use it.
      const terms = columns.map((c) => `${c} = ?`);
      if (columns.includes('status') && !succeeded) terms.push("status <> 'succeeded'");
      const where = terms.length === 0 ? '' : `WHERE ${terms.join(' AND ')}`;
      statement = db.prepare<unknown[], RunRow>(`SELECT ${RUN_COLUMNS} FROM runs ${where} ORDER BY created_at DESC, rowid DESC LIMIT ?`);
      lists.set(shape, statement);
    }
    return statement;
  };
  return {
    insertRun: db.prepare(`INSERT INTO runs (${RUN_COLUMNS}) VALUES (?, ?, ?, ?, 'running', ?, ?, NULL, NULL, NULL, ?, ?, 1, 0, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
    run: db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`),
    claim: db.prepare(
      `UPDATE runs SET status = 'running', owner = ?, lease_until = ?, updated_at = ?, epoch = epoch + 1, cancel_requested = 0,
         finished_at = NULL, outputs = NULL, error = NULL, queue = ? WHERE id = ? AND epoch = ? RETURNING ${RUN_COLUMNS}`,
    ),
    epoch: db.prepare<[string], number>('SELECT epoch FROM runs WHERE id = ?').pluck(),
    // A success is final; a failed or skipped result gives way to a later one (it keeps its rowid: its place).
    insertStep: db.prepare(
      `INSERT INTO steps (run_id, key, status, record, output_blob) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, key)
         DO UPDATE SET status = excluded.status, record = excluded.record, output_blob = excluded.output_blob WHERE steps.status <> 'succeeded'`,
    ),
    // The common write (one result of one run, no blob) as one statement and one commit: the epoch
    // check is part of the insert, so no BEGIN, no separate read and no COMMIT statement.
    recordOwned: db.prepare(
      `INSERT INTO steps (run_id, key, status, record, output_blob) SELECT ?, ?, ?, ?, NULL WHERE EXISTS (SELECT 1 FROM runs WHERE id = ? AND epoch = ?)
         ON CONFLICT (run_id, key) DO UPDATE SET status = excluded.status, record = excluded.record, output_blob = excluded.output_blob WHERE steps.status <> 'succeeded'`,
    ),
    insertBlob: db.prepare('INSERT INTO blobs (hash, value) VALUES (?, ?) ON CONFLICT DO NOTHING'),
    finish: db.prepare(
      'UPDATE runs SET status = ?, outputs = ?, error = ?, finished_at = ?, updated_at = ?, owner = NULL, lease_until = NULL WHERE id = ? AND epoch = ?',
    ),
    renew: db.prepare<unknown[], number>("UPDATE runs SET lease_until = ?, updated_at = ? WHERE id = ? AND epoch = ? AND status = 'running' RETURNING cancel_requested").pluck(),
    cancelFlag: db.prepare<[string], number>('SELECT cancel_requested FROM runs WHERE id = ?').pluck(),
    cancel: db.prepare("UPDATE runs SET cancel_requested = 1, updated_at = ? WHERE id = ? AND status = 'running' AND cancel_requested = 0"),
    steps: db.prepare<[string], string>('SELECT record FROM steps WHERE run_id = ? ORDER BY rowid').pluck(),
    blob: db.prepare<[string], string>('SELECT value FROM blobs WHERE hash = ?').pluck(),
    list,
    // A run is created before it finishes: those that finished before a time are among those
    // created before it, which runs_by_created finds (a run whose clock said otherwise stays until a later prune).
    pruneSteps: db.prepare(`DELETE FROM steps WHERE run_id IN (SELECT id FROM runs WHERE ${PRUNED})`),
    pruneRuns: db.prepare(`DELETE FROM runs WHERE ${PRUNED}`),
    // Blobs no step refers to any more (one step's output may be another's too: they are shared).
    pruneBlobs: db.prepare('DELETE FROM blobs WHERE NOT EXISTS (SELECT 1 FROM steps WHERE output_blob = blobs.hash)'),
  };
}

interface EncodedBatch {
  readonly run_id: string;
  readonly epoch: number;
  readonly steps: readonly EncodedStep[];
  readonly end: RunEnd | undefined;
}

export class SqliteStore implements RunStore {
  private readonly sql: Statements;
  private readonly recordTx: (batches: readonly EncodedBatch[]) => ('ok' | 'fenced')[];
  private readonly createTx: (runs: readonly NewRun[]) => CreateOutcome[];
  private readonly stepsTx: (id: string) => StoredStep[];
  private readonly pruneTx: (finishedBefore: number) => number;
  readonly waits: SqliteWaits;
  readonly triggers: SqliteTriggerControls;

  /** `connection`: the better-sqlite3 handle, for diagnostics and tests; not part of RunStore. */
  constructor(
    readonly connection: BetterSqlite3.Database,
    readonly url: string,
  ) {
    this.sql = prepare(connection);
    const sql = this.sql;
    const access: SqliteAccess = { write: (doing, fn) => this.write(doing, fn), read: (doing, fn) => this.read(doing, fn) };
    const waits = (this.waits = new SqliteWaits(connection, access));
    this.triggers = new SqliteTriggerControls(connection, access);
    this.recordTx = connection.transaction((batches: readonly EncodedBatch[]) =>
      batches.map((batch) => {
        // A run's end is fenced by its own epoch check; a batch without one reads the epoch.
        if (batch.end !== undefined ? !finish(sql, batch.run_id, batch.epoch, batch.end) : sql.epoch.get(batch.run_id) !== batch.epoch) return 'fenced';
        for (const step of batch.steps) {
          const added = sql.insertStep.run(batch.run_id, step.key, step.status, step.json, step.blob?.hash ?? null).changes > 0;
          if (added && step.blob) sql.insertBlob.run(step.blob.hash, step.blob.json);
        }
        return 'ok';
      }),
    ).immediate;
    this.createTx = connection.transaction((runs: readonly NewRun[]): CreateOutcome[] => runs.map((run) => createOne(sql, run))).immediate;
    // One read transaction: the steps and their blobs from the same snapshot.
    this.stepsTx = connection.transaction((id: string) => {
      const parsed = parseSteps(sql.steps.all(id));
      const found = new Map<string, string>();
      for (const hash of parsed.blobs) {
        const value = sql.blob.get(hash);
        if (value !== undefined) found.set(hash, value);
      }
      return withBlobs(parsed, found);
    });
    this.pruneTx = connection.transaction((finishedBefore: number) => {
      sql.pruneSteps.run(finishedBefore, finishedBefore);
      const count = sql.pruneRuns.run(finishedBefore, finishedBefore).changes;
      sql.pruneBlobs.run();
      waits.pruneWaits.run();
      waits.pruneEvents.run(finishedBefore);
      return count;
    }).immediate;
  }

  private write<T>(doing: string, fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(mapSqliteError(this.url, doing, error, 'write'));
    }
  }

  private read<T>(doing: string, fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(mapSqliteError(this.url, doing, error, 'read'));
    }
  }

  createRun(run: NewRun): Promise<CreateOutcome> {
    // One statement, its own commit: no BEGIN and COMMIT around it.
    return this.write(`cannot create run ${run.id}`, () => createOne(this.sql, run));
  }

  createRuns(runs: readonly NewRun[]): Promise<readonly CreateOutcome[]> {
    const more = runs.length > 1 ? ` (and ${runs.length - 1} more started with it)` : '';
    return this.write(`cannot create run ${runs[0]?.id ?? ''}${more}`, () => (runs.length === 1 ? [createOne(this.sql, runs[0]!)] : this.createTx(runs)));
  }

  claimRun(id: string, claim: Claim): Promise<ClaimOutcome> {
    return this.write(`cannot claim run ${id}`, () => {
      const row = this.sql.claim.get(claim.owner, claim.lease_until, claim.now, claim.queue ?? null, id, claim.expected_epoch);
      if (row) return { claimed: true, run: runFromRow(row) };
      const current = this.sql.run.get(id);
      return { claimed: false, run: current && runFromRow(current) };
    });
  }

  recordSteps(batches: readonly StepBatch[]): Promise<readonly ('ok' | 'fenced')[]> {
    return this.write('cannot record step results', () => {
      // Encoded before the write lock is taken, so that the lock is held for the inserts alone.
      const only = batches.length === 1 && batches[0]!.steps.length === 1 && batches[0]!.end === undefined ? batches[0]! : undefined;
      if (only !== undefined) {
        const step = encodeStep(only.steps[0]!);
        if (step.blob === undefined) return [this.recordOne(only.run_id, only.epoch, step)];
      }
      const encoded = batches.map((b) => ({ run_id: b.run_id, epoch: b.epoch, steps: b.steps.map(encodeStep), end: b.end }));
      return this.recordTx(encoded);
    });
  }

  /**
   * Nothing added: the run's epoch is no longer the writer's (fenced), or a success is kept. A
   * claim that lands after the insert and before this read makes the writer stale all the same.
   */
  private recordOne(runId: string, epoch: number, step: EncodedStep): 'ok' | 'fenced' {
    if (this.sql.recordOwned.run(runId, step.key, step.status, step.json, runId, epoch).changes > 0) return 'ok';
    return this.sql.epoch.get(runId) === epoch ? 'ok' : 'fenced';
  }

  finishRun(id: string, epoch: number, end: RunEnd): Promise<'ok' | 'fenced'> {
    return this.write(`cannot finish run ${id}`, () => (finish(this.sql, id, epoch, end) ? 'ok' : 'fenced'));
  }

  renewLease(id: string, epoch: number, leaseUntil: number, now: number): Promise<{ result: 'ok' | 'fenced'; cancel_requested: boolean }> {
    return this.write(`cannot renew the lease of run ${id}`, () => {
      const flag = this.sql.renew.get(leaseUntil, now, id, epoch);
      if (flag !== undefined) return { result: 'ok', cancel_requested: flag === 1 };
      return { result: 'fenced', cancel_requested: this.sql.cancelFlag.get(id) === 1 };
    });
  }

  requestCancel(id: string, now: number): Promise<StoredRun | undefined> {
    return this.write(`cannot cancel run ${id}`, () => {
      this.sql.cancel.run(now, id);
      const row = this.sql.run.get(id);
      return row && runFromRow(row);
    });
  }

  getRun(id: string): Promise<StoredRun | undefined> {
    return this.read(`cannot read run ${id}`, () => {
      const row = this.sql.run.get(id);
      return row && runFromRow(row);
    });
  }

  getSteps(id: string): Promise<readonly StoredStep[]> {
    return this.read(`cannot read the steps of run ${id}`, () => this.stepsTx(id));
  }

  listRuns(filter: RunFilter = {}): Promise<readonly StoredRun[]> {
    return this.read('cannot list runs', () => {
      const limit = listLimit(filter.limit);
      const shape = listShape(filter);
      return decodeListed(this.sql.list(shape.key, shape.columns, filter.status === 'succeeded').all(...shape.values, limit), runFromRow, filter, this.url);
    });
  }

  prune(finishedBefore: number): Promise<number> {
    return this.write('cannot prune runs', () => this.pruneTx(finishedBefore));
  }

  async close(): Promise<void> {
    if (this.connection.open) this.connection.close();
  }
}

/** Creates a run unless one has its id (then that one, as it is). */
function createOne(sql: Statements, run: NewRun): CreateOutcome {
  const added = sql.insertRun.run(run.id, run.chain, run.chain_hash, jsonText(run.input), run.now, run.now, run.owner, run.lease_until, run.queue ?? null, run.rerun_of ?? null, run.rerun_from ?? null).changes > 0;
  return added ? { created: true, run: newStoredRun(run) } : { created: false, run: runFromRow(sql.run.get(run.id)!) };
}

/** Ends a run if its epoch is still `epoch`; false: fenced. */
function finish(sql: Statements, id: string, epoch: number, end: RunEnd): boolean {
  return sql.finish.run(end.status, jsonText(end.outputs ?? null), jsonText(end.error ?? null), end.finished_at, end.finished_at, id, epoch).changes > 0;
}
