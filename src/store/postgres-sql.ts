import { RUN_COLUMNS, type ListShape } from './run-codec.js';

// The PostgreSQL store's statements, for one schema (`s`, quoted). Each is a named query, so a
// connection parses and plans it once (a pool serves one store, so names need not say the schema).

export interface Query {
  readonly name: string;
  readonly text: string;
}

export function postgresStatements(s: string, schema: string) {
  const q = (name: string, text: string): Query => ({ name: `toolchain_${name}`, text });
  return {
    insertRun: q(
      'insert_run',
      `INSERT INTO ${s}.runs (id, chain, chain_hash, input, status, created_at, updated_at, owner, lease_until, epoch, queue, rerun_of, rerun_from)
       VALUES ($1, $2, $3, $4, 'running', $5, $5, $6, $7, 1, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
    ),
    run: q('run', `SELECT ${RUN_COLUMNS} FROM ${s}.runs WHERE id = $1`),
    claim: q(
      'claim',
      `UPDATE ${s}.runs SET status = 'running', owner = $3, lease_until = $4, updated_at = $5, epoch = epoch + 1,
         cancel_requested = false, finished_at = NULL, outputs = NULL, error = NULL, queue = $6
       WHERE id = $1 AND epoch = $2 RETURNING ${RUN_COLUMNS}`,
    ),
    // Fencing: the runs whose epoch is still the writer's are share-locked (in id order, so two
    // writers never wait on each other in a circle) until the commit; a claim (an UPDATE of the
    // row) waits for that commit, and a write that waits for a claim finds the new epoch and adds
    // nothing. A success is final; a failed or skipped result gives way to a later one (keeping its
    // `seq`: its place), which is the ON CONFLICT clause of every shape. Four shapes of the same
    // statement, from the cheapest (measured: one step 1.5 times as fast as one run's steps, which
    // is twice as fast as the general form): one step, one run's steps, several runs' steps, and
    // steps with big outputs (whose blobs are added with the steps that refer to them).
    recordStep: q(
      'record_step',
      `WITH owned AS (SELECT id FROM ${s}.runs WHERE id = $1 AND epoch = $2 FOR SHARE), added AS (
         INSERT INTO ${s}.steps AS old (run_id, key, status, record) SELECT id, $3, $4, $5 FROM owned ${REPLACE}
       )
       SELECT count(*)::int AS owned FROM owned`,
    ),
    recordOne: q(
      'record_one',
      `WITH owned AS (SELECT id FROM ${s}.runs WHERE id = $1 AND epoch = $2 FOR SHARE), added AS (
         INSERT INTO ${s}.steps AS old (run_id, key, status, record)
         SELECT owned.id, st.key, st.status, st.record FROM owned, unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS st(key, status, record, ord)
         ORDER BY st.ord ${REPLACE} RETURNING 1
       )
       SELECT count(*)::int AS owned FROM owned`,
    ),
    // One run's last steps and its end: the UPDATE of the run's row is the fence (a claim waits
    // for its commit; after a claim it finds no row under the old epoch and nothing is added).
    recordFinish: q(
      'record_finish',
      `WITH fin AS (
         UPDATE ${s}.runs SET status = $6, outputs = $7, error = $8, finished_at = $9, updated_at = $9, owner = NULL, lease_until = NULL
         WHERE id = $1 AND epoch = $2 RETURNING id
       ), added AS (
         INSERT INTO ${s}.steps AS old (run_id, key, status, record)
         SELECT fin.id, st.key, st.status, st.record FROM fin, unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS st(key, status, record, ord)
         ORDER BY st.ord ${REPLACE} RETURNING 1
       )
       SELECT count(*)::int AS owned FROM fin`,
    ),
    // The ends of several runs whose steps were just recorded ($1 ids, $2 epochs, then per run).
    finishMany: q(
      'finish_many',
      `UPDATE ${s}.runs AS r SET status = x.status, outputs = x.outputs, error = x.error, finished_at = x.at, updated_at = x.at, owner = NULL, lease_until = NULL
       FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS x(id, epoch, status, outputs, error, at)
       WHERE r.id = x.id AND r.epoch = x.epoch RETURNING r.id`,
    ),
    recordMany: q('record_many', recordMany(s, false)),
    recordBlobs: q('record_blobs', recordMany(s, true)),
    finish: q(
      'finish',
      `UPDATE ${s}.runs SET status = $3, outputs = $4, error = $5, finished_at = $6, updated_at = $6, owner = NULL, lease_until = NULL
       WHERE id = $1 AND epoch = $2`,
    ),
    renew: q('renew', `UPDATE ${s}.runs SET lease_until = $3, updated_at = $4 WHERE id = $1 AND epoch = $2 AND status = 'running' RETURNING cancel_requested`),
    cancelFlag: q('cancel_flag', `SELECT cancel_requested FROM ${s}.runs WHERE id = $1`),
    cancel: q(
      'cancel',
      `WITH asked AS (UPDATE ${s}.runs SET cancel_requested = true, updated_at = $2 WHERE id = $1 AND status = 'running' AND NOT cancel_requested RETURNING ${RUN_COLUMNS})
       SELECT ${RUN_COLUMNS} FROM asked UNION ALL SELECT ${RUN_COLUMNS} FROM ${s}.runs WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM asked)`,
    ),
    steps: q('steps', `SELECT st.record, b.value AS blob FROM ${s}.steps st LEFT JOIN ${s}.blobs b ON b.hash = st.output_blob WHERE st.run_id = $1 ORDER BY st.seq`),
    /** A listing's statement for a shape of filter: its values, then the limit. */
    list: (shape: ListShape): Query => {
      const where = shape.columns.length === 0 ? '' : `WHERE ${shape.columns.map((c, i) => `${c} = $${i + 1}`).join(' AND ')}`;
      return q(`list_${shape.key}`, `SELECT ${RUN_COLUMNS} FROM ${s}.runs ${where} ORDER BY created_at DESC, seq DESC LIMIT $${shape.columns.length + 1}`);
    },
    /** Taken (shared) by writes that add blobs, (exclusive) by prune, which deletes the blobs no step refers to. */
    blobLock: `toolchain blobs ${schema}`,
    pruneRuns: `WITH gone AS (
                  DELETE FROM ${s}.runs WHERE id IN (SELECT id FROM ${s}.runs WHERE status <> 'running' AND finished_at < $1 ORDER BY id FOR UPDATE) RETURNING id
                ), steps AS (DELETE FROM ${s}.steps WHERE run_id IN (SELECT id FROM gone)),
                waits AS (DELETE FROM ${s}.waits WHERE run_id IN (SELECT id FROM gone)),
                wakes AS (DELETE FROM ${s}.wakes WHERE run_id IN (SELECT id FROM gone))
                SELECT count(*)::int AS n FROM gone`,
    pruneBlobs: `DELETE FROM ${s}.blobs b WHERE NOT EXISTS (SELECT 1 FROM ${s}.steps st WHERE st.output_blob = b.hash)`,
  };
}

export type PostgresStatements = ReturnType<typeof postgresStatements>;

/** A success is final; any other result gives way to a later one (the row keeps its seq). */
const REPLACE = `ON CONFLICT (run_id, key) DO UPDATE SET status = EXCLUDED.status, record = EXCLUDED.record, output_blob = EXCLUDED.output_blob
  WHERE old.status <> 'succeeded'`;

/** $1 run ids, $2 epochs, then per step: $3 batch number (1-based), $4 key, $5 status, $6 text, $7 blob hash; $8/$9 blob hashes/texts. */
function recordMany(s: string, blobs: boolean): string {
  const keep = blobs
    ? `, kept AS (
         INSERT INTO ${s}.blobs (hash, value) SELECT x.hash, x.value FROM unnest($8::text[], $9::text[]) AS x(hash, value)
         WHERE x.hash IN (SELECT output_blob FROM added) ON CONFLICT DO NOTHING
       )`
    : '';
  return `WITH batch AS (
       SELECT b.run_id, b.epoch, b.n FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS b(run_id, epoch, n)
     ), owned AS (
       SELECT batch.n, r.id FROM batch JOIN ${s}.runs r ON r.id = batch.run_id AND r.epoch = batch.epoch ORDER BY r.id FOR SHARE OF r
     ), added AS (
       INSERT INTO ${s}.steps AS old (run_id, key, status, record, output_blob)
       SELECT owned.id, st.key, st.status, st.record, st.blob
       FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS st(n, key, status, record, blob, ord)
       JOIN owned ON owned.n = st.n ORDER BY st.ord
       ${REPLACE} RETURNING output_blob
     )${keep}
     SELECT n::int AS n FROM owned`;
}
