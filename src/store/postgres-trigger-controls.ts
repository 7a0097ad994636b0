import type { PostgresAccess } from './postgres-waits.js';
import type { Query } from './postgres-sql.js';
import { controlFromFields, noControl, type TriggerChange, type TriggerControl, type TriggerControlStore, type TriggerPause } from './trigger-control-types.js';

// The PostgreSQL store's paused triggers (the contract is trigger-control-types.ts; the table is
// migration 5 of postgres-schema.ts). The write is one statement that changes the record only
// where it is in the other state and returns it; when it changed nothing, the record is read by
// a statement of its own: under READ COMMITTED that one sees what a concurrent writer committed,
// which the first statement's snapshot may not.

interface ControlRow {
  key: string;
  paused_by: string | null;
  paused_at: string | number | null;
  reason: string | null;
  resumed_at: string | number | null;
}

const COLUMNS = 'key, paused_by, paused_at, reason, resumed_at';

function statements(s: string) {
  const q = (name: string, text: string): Query => ({ name: `toolchain_${name}`, text });
  return {
    pause: q(
      'pause_trigger',
      `INSERT INTO ${s}.trigger_controls AS t (key, paused_by, paused_at, reason) VALUES ($1, $2, $3::bigint, $4)
       ON CONFLICT (key) DO UPDATE SET paused_by = EXCLUDED.paused_by, paused_at = EXCLUDED.paused_at, reason = EXCLUDED.reason
       WHERE t.paused_at IS NULL
       RETURNING ${COLUMNS}`,
    ),
    resume: q('resume_trigger', `UPDATE ${s}.trigger_controls SET paused_by = NULL, paused_at = NULL, reason = NULL, resumed_at = $2::bigint WHERE key = $1 AND paused_at IS NOT NULL RETURNING ${COLUMNS}`),
    one: q('trigger_control', `SELECT ${COLUMNS} FROM ${s}.trigger_controls WHERE key = $1`),
    // Byte order, as the other drivers sort, whatever the database's collation.
    all: q('trigger_controls', `SELECT ${COLUMNS} FROM ${s}.trigger_controls ORDER BY key COLLATE "C"`),
  };
}

export class PostgresTriggerControls implements TriggerControlStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    s: string,
    private readonly access: PostgresAccess,
  ) {
    this.sql = statements(s);
  }

  async pause(key: string, pause: TriggerPause): Promise<TriggerChange> {
    const doing = `cannot pause trigger ${key}`;
    const row = (await this.access.query<ControlRow>(doing, 'write', this.sql.pause, [key, pause.by, pause.at, pause.reason ?? null]))[0];
    if (row !== undefined) return { control: controlFromFields(row.key, row), changed: true };
    return { control: await this.read(key, doing), changed: false };
  }

  async resume(key: string, at: number): Promise<TriggerChange> {
    const doing = `cannot resume trigger ${key}`;
    const row = (await this.access.query<ControlRow>(doing, 'write', this.sql.resume, [key, at]))[0];
    if (row !== undefined) return { control: controlFromFields(row.key, row), changed: true };
    return { control: await this.read(key, doing), changed: false };
  }

  async list(): Promise<readonly TriggerControl[]> {
    return (await this.access.query<ControlRow>('cannot list paused triggers', 'read', this.sql.all, [])).map((row) => controlFromFields(row.key, row));
  }

  private async read(key: string, doing: string): Promise<TriggerControl> {
    const row = (await this.access.query<ControlRow>(doing, 'write', this.sql.one, [key]))[0];
    return row === undefined ? noControl(key) : controlFromFields(row.key, row);
  }
}
