import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteAccess } from './sqlite-waits.js';
import { controlFromFields, noControl, type TriggerChange, type TriggerControl, type TriggerControlStore, type TriggerPause } from './trigger-control-types.js';

// The SQLite store's paused triggers (the contract is trigger-control-types.ts; the table is
// migration 5 of sqlite-schema.ts). Pausing and resuming are one transaction each: the write
// only where the record is in the other state, then the record as it is.

interface ControlRow {
  key: string;
  paused_by: string | null;
  paused_at: number | null;
  reason: string | null;
  resumed_at: number | null;
}

const COLUMNS = 'key, paused_by, paused_at, reason, resumed_at';

export class SqliteTriggerControls implements TriggerControlStore {
  private readonly pauseTx: (key: string, pause: TriggerPause) => TriggerChange;
  private readonly resumeTx: (key: string, at: number) => TriggerChange;
  private readonly all: BetterSqlite3.Statement<[], ControlRow>;

  constructor(
    db: BetterSqlite3.Database,
    private readonly access: SqliteAccess,
  ) {
    const one = db.prepare<[string], ControlRow>(`SELECT ${COLUMNS} FROM trigger_controls WHERE key = ?`);
    const pause = db.prepare(
      `INSERT INTO trigger_controls (key, paused_by, paused_at, reason) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET paused_by = excluded.paused_by, paused_at = excluded.paused_at, reason = excluded.reason
       WHERE trigger_controls.paused_at IS NULL`,
    );
    const resume = db.prepare('UPDATE trigger_controls SET paused_by = NULL, paused_at = NULL, reason = NULL, resumed_at = ? WHERE key = ? AND paused_at IS NOT NULL');
    this.all = db.prepare<[], ControlRow>(`SELECT ${COLUMNS} FROM trigger_controls ORDER BY key`);
    const read = (key: string): TriggerControl => {
      const row = one.get(key);
      return row === undefined ? noControl(key) : controlFromFields(row.key, row);
    };
    this.pauseTx = db.transaction((key: string, p: TriggerPause) => {
      const changed = pause.run(key, p.by, p.at, p.reason ?? null).changes > 0;
      return { control: read(key), changed };
    }).immediate;
    this.resumeTx = db.transaction((key: string, at: number) => {
      const changed = resume.run(at, key).changes > 0;
      return { control: read(key), changed };
    }).immediate;
  }

  pause(key: string, pause: TriggerPause): Promise<TriggerChange> {
    return this.access.write(`cannot pause trigger ${key}`, () => this.pauseTx(key, pause));
  }

  resume(key: string, at: number): Promise<TriggerChange> {
    return this.access.write(`cannot resume trigger ${key}`, () => this.resumeTx(key, at));
  }

  list(): Promise<readonly TriggerControl[]> {
    return this.access.read('cannot list paused triggers', () => this.all.all().map((row) => controlFromFields(row.key, row)));
  }
}
