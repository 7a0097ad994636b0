import type { DiskCache } from '../cache/index.js';
import type { Clock } from '../common/clock.js';
import { ToolchainError, type Diagnostic } from '../common/errors.js';
import type { LogEntry } from '../run-model/events.js';
import type { Observer } from '../observe/index.js';
import { isolationSettings, type IsolationLevel, type IsolationOptions, type IsolationSettings, type PluginEvent } from '../plugins/index.js';
import type { ApproveCallback, LoadMode, Registry, RegistryOptions } from '../registry/types.js';
import type { RecoveryEvent } from '../runs/recovery.js';
import type { TriggerEvent } from '../triggers/scheduler.js';
import type { Durability, RunStore } from '../store/types.js';

// What createEngine takes, and the checks of the options a caller can get wrong (
// bad options are refused up front with the option's name, what was expected and what came).

export interface EngineOptions {
  /** Folder of chain files (default: none; chains can also be added with `addChain`). */
  readonly chainsDir?: string;
  /** Folder of plugin folders. */
  readonly pluginsDir?: string;
  /** Reload chains (and plugins) when their files change. */
  readonly watch?: boolean;
  /** Steps running at once across every run of this engine (default: unlimited). */
  readonly concurrency?: number;
  /** Elements one `for_each` of any run of this engine may have; a step over more fails with FOR_EACH_TOO_LARGE (default: unlimited; `toolchain serve` sets its `for-each-elements` limit). */
  readonly maxForEachElements?: number;
  /** Time source for timestamps, timeouts and backoff; tests inject a fake one. */
  readonly clock?: Clock;
  /** Uniform random in [0, 1) for backoff jitter; tests inject a fixed one. */
  readonly random?: () => number;
  /** Use this registry instead of a new one (e.g. shared with an LLM front end). */
  readonly registry?: Registry;
  /** Options of the registry the engine creates (result size limit, env, cache clock, schema compiler). */
  readonly registryOptions?: Omit<RegistryOptions, 'load'>;
  /**
   * When loading work happens (LoadMode): `eager` (the default) compiles validators and imports
   * plugin handlers at load, so a long-running engine finds a broken plugin then and keeps the
   * last good version; `lazy` defers both to a tool's first call, for one-shot processes such as
   * `toolchain run`. With `registry`, the registry's own mode applies (and this must match it).
   */
  readonly load?: Exclude<LoadMode, 'static'>;
  /**
   * The disk cache for YAML parses, plugin module transforms and compiled validators: one opened
   * with `openUserCache` / `openDiskCache`, or `'off'`. Default: `openUserCache()`, the per-user
   * cache directory ($TOOLCHAIN_CACHE_DIR, $XDG_CACHE_HOME/toolchain or ~/.cache/toolchain).
   */
  readonly cache?: DiskCache | 'off';
  /** Where tools' `ctx.log()` lines go (default: dropped). */
  readonly logger?: (entry: LogEntry) => void;
  /**
   * Where runs are recorded: `memory:` (the default), `sqlite:FILE`, `postgres://…`,
   * `redis://…`, or a RunStore. The engine closes a store it opened from a URL.
   */
  readonly store?: string | RunStore;
  /**
   * `normal` (the default): a step starts only when every result it reads is recorded, and the
   * store survives a crash of the process; `full`: the same, surviving power loss; `none`: results
   * are written behind the steps (a crash may re-run finished steps with different results).
   */
  readonly durability?: Durability;
  /**
   * `redis://HOST:PORT[/DB][?queue=NAME]`: runs are executed by workers
   * (`toolchain worker`, `createWorker`) taking them from this BullMQ queue; `run` enqueues and
   * waits for the result. The store then defaults to the queue's Redis.
   */
  readonly queue?: string;
  /**
   * Resume, without being asked, the runs on the store whose owner is gone (a process killed
   * mid-run): at start, then every `recoverIntervalMs` (default 5 s). Only runs in no queue (a
   * queue's runs are its workers'); needs a store other than `memory:`. Default false; the
   * long-running commands (serve, watch) turn it on unless given --no-recover.
   */
  readonly recover?: boolean;
  readonly recoverIntervalMs?: number;
  /** With `recover`: each run it resumed, how that ended, and each it had to leave to an operator (CHAIN_CHANGED). */
  readonly onRecovery?: (event: RecoveryEvent) => void;
  /**
   * Wake every waiting run on the store whose wait is over (a sleep's time, an event, a decision):
   * at start, then every `wakeIntervalMs` (default 1 s) and at once for what happens in this
   * process. Default false: an engine then wakes only the runs its own callers await
   * (`engine.run` of a chain that waits resolves when the run ends). serve, worker and watch turn it on.
   */
  readonly timers?: boolean;
  readonly wakeIntervalMs?: number;
  /**
   * Fire the loaded chains' `triggers:`: one run per tick (schedules, intervals) or per event,
   * under the id `CHAIN#TRIGGER@TICK` or `CHAIN#TRIGGER@EVENT`, so that any number of processes
   * sharing the store make one run of it. Looked at every `triggerIntervalMs` (default 250 ms) on
   * the engine's clock, which also reads the events other processes recorded. With `queue`, the
   * queue's BullMQ job schedulers carry the schedules and intervals instead, and this engine takes
   * their tick jobs. Webhook triggers receive their deliveries through
   * `engine.triggers.webhook(path)` (a server's `/hooks/PATH`). Default false; serve, worker and
   * watch turn it on. Runs that wait need `timers` too.
   */
  readonly triggers?: boolean;
  readonly triggerIntervalMs?: number;
  /** With `triggers`: each tick, event and webhook delivery fired here, and each dropped (overlap, a full queue, an input refused). */
  readonly onTrigger?: (event: TriggerEvent) => void;
  /**
   * Where webhook triggers read the secrets their `secret_env` names, at each delivery (default:
   * process.env). Nothing else reads it, and no secret is kept, logged or shown.
   */
  readonly secrets?: Readonly<Record<string, string | undefined>>;
  /**
   * Asked before every dangerous tool call of a run that brings no `approve` of its own: `true`,
   * `false`, or `'wait'` (the call becomes an approval request a person decides later). Default:
   * none (such calls are refused with APPROVAL_DENIED).
   */
  readonly approve?: ApproveCallback;
  /** How long a run's owner holds it without renewing (default 30 s): a run whose owner died is resumable after that at the latest. */
  readonly leaseMs?: number;
  /**
   * Metrics, logs and traces of every run: an Observer (`createObserver`), or `true` for
   * one with metrics and traces and a silent log. Off by default: observing means building every
   * run's events.
   */
  readonly observe?: Observer | true;
  /** The least isolation of plugins' handlers (default `none`: each plugin's `isolation:` decides), and workers' limits. */
  readonly isolation?: IsolationLevel | IsolationOptions;
  /** Plugin loads, reloads and failures. */
  readonly onPluginEvent?: (event: PluginEvent) => void;
  /** With `watch`: the chains folder was read again (its runnable chains and its problems). */
  readonly onChainsReloaded?: (event: ChainsReloadedEvent) => void;
}

export interface ChainsReloadedEvent {
  /** Names of the runnable chains after the reload. */
  readonly chains: readonly string[];
  readonly diagnostics: readonly Diagnostic[];
}

export function checkConcurrency(name: string, value: unknown): void {
  if (value === undefined || value === Infinity) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new ToolchainError('USAGE', `option '${name}' must be a whole number of at least 1, got ${JSON.stringify(value) ?? String(value)}`);
  }
}

/** Checks the loading options; the isolation settings they make. */
export function checkLoadOptions({ load, registry, cache, isolation }: EngineOptions): IsolationSettings {
  const given = (v: unknown): string => JSON.stringify(v) ?? String(v);
  if (load !== undefined && load !== 'eager' && load !== 'lazy') throw new ToolchainError('USAGE', `option 'load' must be 'eager' or 'lazy', got ${given(load)}`);
  if (load !== undefined && registry && registry.load !== load) throw new ToolchainError('USAGE', `option 'load' is '${load}' but the registry given was made with load '${registry.load}'`);
  if (cache !== undefined && cache !== 'off' && typeof (cache as Partial<DiskCache>).read !== 'function') {
    throw new ToolchainError('USAGE', `option 'cache' must be 'off' or a cache from openUserCache/openDiskCache, got ${given(cache)}`);
  }
  return isolationSettings(isolation);
}

