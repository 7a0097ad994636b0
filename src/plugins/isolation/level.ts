import { ToolchainError } from '../../common/errors.js';

// Where a plugin's handlers run (plugin.yaml `isolation:`), and the engine's floor for every
// plugin (`--isolation`, `createEngine({ isolation })`): the stricter of the two applies.
// - `none`: in the engine's own thread, as plain function calls. Nothing stands between a
//   handler and the engine: `while(true){}` freezes it, `process.exit` ends it.
// - `worker`: in a pool of worker threads (own heap, own prototypes, bounded memory); a call
//   that hangs past its timeout or is cancelled gets its worker terminated and replaced.
// - `process`: the same in child processes: also native crashes, signals and process-wide state.

export type IsolationLevel = 'none' | 'worker' | 'process';

export const ISOLATION_LEVELS: readonly IsolationLevel[] = ['none', 'worker', 'process'];

/** What `createEngine({ isolation })` takes beside a bare level. */
export interface IsolationOptions {
  /** The least isolation of every plugin (default `none`: each plugin's own `isolation:` decides). */
  readonly level?: IsolationLevel;
  /** Heap limit of each worker thread or process, in MiB (default 512). */
  readonly memoryMb?: number;
  /** Most workers (threads or processes) per plugin, each running one call at a time (default 4). */
  readonly workers?: number;
  /** After a cancel or timeout, how long a call may take to stop before its worker is terminated (default 500 ms). */
  readonly graceMs?: number;
}

export interface IsolationSettings {
  readonly minimum: IsolationLevel;
  readonly memoryMb: number;
  readonly workers: number;
  readonly graceMs: number;
}

export const DEFAULT_ISOLATION: IsolationSettings = Object.freeze({ minimum: 'none', memoryMb: 512, workers: 4, graceMs: 500 });

export function isIsolationLevel(value: unknown): value is IsolationLevel {
  return typeof value === 'string' && (ISOLATION_LEVELS as readonly string[]).includes(value);
}

/** The stricter of two levels. */
export function stricter(a: IsolationLevel, b: IsolationLevel): IsolationLevel {
  return ISOLATION_LEVELS.indexOf(a) >= ISOLATION_LEVELS.indexOf(b) ? a : b;
}

function whole(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ToolchainError('USAGE', `option 'isolation.${name}' must be a whole number from ${min} to ${max}, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
}

/** Checks the engine's option (name, expected and given value in the error) and fills the defaults. */
export function isolationSettings(option: IsolationLevel | IsolationOptions | undefined): IsolationSettings {
  if (option === undefined) return DEFAULT_ISOLATION;
  const o: IsolationOptions = typeof option === 'string' ? { level: option } : option;
  if (typeof o !== 'object' || o === null) {
    throw new ToolchainError('USAGE', `option 'isolation' must be 'none', 'worker', 'process' or an object, got ${JSON.stringify(option) ?? String(option)}`);
  }
  if (o.level !== undefined && !isIsolationLevel(o.level)) {
    throw new ToolchainError('USAGE', `option 'isolation' must be 'none', 'worker' or 'process', got ${JSON.stringify(o.level) ?? String(o.level)}`);
  }
  return Object.freeze({
    minimum: o.level ?? DEFAULT_ISOLATION.minimum,
    memoryMb: o.memoryMb === undefined ? DEFAULT_ISOLATION.memoryMb : whole('memoryMb', o.memoryMb, 16, 65_536),
    workers: o.workers === undefined ? DEFAULT_ISOLATION.workers : whole('workers', o.workers, 1, 256),
    graceMs: o.graceMs === undefined ? DEFAULT_ISOLATION.graceMs : whole('graceMs', o.graceMs, 0, 60_000),
  });
}
