import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Callee } from './call/index.js';
import { openUserCache, type DiskCache } from './cache/index.js';
import { compileChain, createCompileCache, loadChainSet, type ChainPlan, type ChainSet } from './compiler/index.js';
import { describeKind, didYouMean, formatDiagnostic, hasErrors, suggestionSuffix, ToolchainError, type Diagnostic, type ErrorCode } from './common/errors.js';
import { createBinder, createInputChecker, createSlots, executeChain, systemClock, type Clock, type ExecutorHost, type LogEntry, type RunError, type RunOptions, type RunResult } from './executor/index.js';
import { chainCallee } from './executor/step-callees.js';
import { runAgent } from './llm/agent/index.js';
import type { CallTargets, ChainCallOptions } from './llm/call-targets.js';
import { DurableRuns, type StartOptions } from './runs/durable-runs.js';
import type { RunDetail, RunSummary } from './runs/stored-result.js';
import { openStore } from './store/open-store.js';
import type { Durability, RunFilter, RunStore } from './store/types.js';
import { createPluginHost, isolationSettings, watchFiles, type IsolationLevel, type IsolationOptions, type IsolationSettings, type PluginEvent, type PluginHost, type PluginStatus } from './plugins/index.js';
import { createRegistry, createSchemaCompiler } from './registry/index.js';
import type { LoadMode, Registry, RegistryOptions, Tool, ToolDefinition, ToolSet } from './registry/types.js';

// createEngine wires the stages together (STYLE 1): chain files → compiled plans, plugins and
// code → the tool registry, and the executor, which walks a plan with the tools of the moment.
//
// Linking choice: chains are compiled WITHOUT the tool catalogue, and a run resolves its tools
// when it starts (executor/bind-tools.ts, cached per plan and ToolSet). So a chain whose tool is
// registered after the engine started becomes runnable at once, a plugin reload never leaves a
// chain "broken" until the chains are reloaded too, and a missing tool fails the run that needs
// it with TOOL_NOT_FOUND (naming the tool and the plugin that used to provide it). The static
// check against installed tools is `toolchain validate`'s job.

export interface EngineOptions {
  /** Folder of chain files (default: none; chains can also be added with `addChain`). */
  readonly chainsDir?: string;
  /** Folder of plugin folders (SPEC §3). */
  readonly pluginsDir?: string;
  /** Reload chains (and plugins) when their files change (SPEC §3.3). */
  readonly watch?: boolean;
  /** Steps running at once across every run of this engine (default: unlimited). */
  readonly concurrency?: number;
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
   * Where runs are recorded (SPEC §7.1): `memory:` (the default), `sqlite:FILE`, `postgres://…`,
   * `redis://…`, or a RunStore. The engine closes a store it opened from a URL.
   */
  readonly store?: string | RunStore;
  readonly durability?: Durability;
  /** How long a run's owner holds it without renewing (default 30 s): a run whose owner died is resumable after that at the latest. */
  readonly leaseMs?: number;
  /** The least isolation of plugins' handlers (default `none`: each plugin's `isolation:` decides), and workers' limits. */
  readonly isolation?: IsolationLevel | IsolationOptions;
  /** Plugin loads, reloads and failures (SPEC §3.3). */
  readonly onPluginEvent?: (event: PluginEvent) => void;
  /** With `watch`: the chains folder was read again (its runnable chains and its problems). */
  readonly onChainsReloaded?: (event: ChainsReloadedEvent) => void;
}

export interface ChainsReloadedEvent {
  /** Names of the runnable chains after the reload. */
  readonly chains: readonly string[];
  readonly diagnostics: readonly Diagnostic[];
}

export interface Engine extends CallTargets {
  /**
   * Runs a chain. Resolves with the result whether the run succeeded or failed; rejects only for
   * bad options. With `runId` (SPEC §7.2): a finished run with that id is answered from the store,
   * a live one refused (RUN_IN_PROGRESS), one whose owner died resumed.
   */
  run(chain: string, input?: unknown, options?: StartOptions): Promise<RunResult>;
  /** Continues a run cut short (crash, kill, cancel) or failed (redrive): recorded successes are not run again. */
  resume(runId: string, options?: StartOptions): Promise<RunResult>;
  /** Asks a run to stop, wherever it runs (through the store); false when no such run is running. */
  cancel(runId: string): Promise<boolean>;
  /** The recorded runs. */
  readonly runs: {
    list(filter?: RunFilter): Promise<RunSummary[]>;
    get(runId: string): Promise<RunDetail | undefined>;
  };
  /** Adds a tool from code (SPEC §3.5); chains that use it can run at once. */
  registerTool(def: ToolDefinition): Tool;
  /** Compiles a chain from YAML text and makes it runnable; throws a ToolchainError with its diagnostics. */
  addChain(text: string, file?: string): ChainPlan;
  /** Every runnable chain. */
  chains(): ChainPlan[];
  /** A chain as something a model's call can reach (SPEC §4): each call is a run of it. */
  chainCallee(chain: ChainPlan, options?: ChainCallOptions): Callee;
  chain(name: string): ChainPlan | undefined;
  /** The current tools (an immutable snapshot). */
  tools(): ToolSet;
  /** Problems found loading the chains folder. */
  diagnostics(): readonly Diagnostic[];
  /** Every plugin folder and its state (empty without `pluginsDir`). */
  plugins(): PluginStatus[];
  /** Re-reads the chains folder. */
  reloadChains(): Promise<void>;
  /** Stops watching; runs in flight finish on their own. */
  close(): Promise<void>;
}

function checkConcurrency(name: string, value: unknown): void {
  if (value === undefined || value === Infinity) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new ToolchainError('USAGE', `option '${name}' must be a whole number of at least 1, got ${JSON.stringify(value) ?? String(value)}`);
  }
}

const noLog = (): void => undefined;

function checkLoadOptions({ load, registry, cache, isolation }: EngineOptions): IsolationSettings {
  const given = (v: unknown): string => JSON.stringify(v) ?? String(v);
  if (load !== undefined && load !== 'eager' && load !== 'lazy') throw new ToolchainError('USAGE', `option 'load' must be 'eager' or 'lazy', got ${given(load)}`);
  if (load !== undefined && registry && registry.load !== load) throw new ToolchainError('USAGE', `option 'load' is '${load}' but the registry given was made with load '${registry.load}'`);
  if (cache !== undefined && cache !== 'off' && typeof (cache as Partial<DiskCache>).read !== 'function') {
    throw new ToolchainError('USAGE', `option 'cache' must be 'off' or a cache from openUserCache/openDiskCache, got ${given(cache)}`);
  }
  return isolationSettings(isolation);
}

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  checkConcurrency('concurrency', options.concurrency);
  const isolation = checkLoadOptions(options);
  // Every cache belongs to this engine; only the disk cache's directory is shared (per user).
  const disk = options.cache === 'off' ? undefined : (options.cache ?? openUserCache());
  const registry =
    options.registry ??
    createRegistry({ ...options.registryOptions, load: options.load ?? 'eager', schemas: options.registryOptions?.schemas ?? createSchemaCompiler(disk ? { cache: disk } : {}) });
  const compiled = createCompileCache(disk ? { disk } : {});
  const chainsDir = options.chainsDir !== undefined ? resolve(options.chainsDir) : undefined;
  let set: ChainSet = { plans: new Map(), files: [], diagnostics: [] };
  /** Chains added from code; the folder's chains take precedence over none of them (names must not clash). */
  const added = new Map<string, ChainPlan>();
  const closers: (() => Promise<void> | void)[] = [];

  const lookup = (name: string): ChainPlan | undefined => added.get(name) ?? set.plans.get(name);

  const host: ExecutorHost = {
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    slots: options.concurrency !== undefined && options.concurrency !== Infinity ? createSlots(options.concurrency) : undefined,
    newRunId: randomUUID,
    chain: lookup,
    log: options.logger ?? noLog,
    binder: createBinder(),
    checkInput: createInputChecker((schema) => registry.schemas.compile(schema, 'arguments').validate),
    agents: runAgent,
  };
  const store = typeof options.store === 'object' ? options.store : await openStore(options.store ?? 'memory:', { durability: options.durability ?? 'normal' });
  if (typeof options.store !== 'object') closers.push(() => store.close());
  const durable = new DurableRuns({
    store,
    inProcess: store.url === 'memory:',
    leaseMs: options.leaseMs ?? 30_000,
    clock: host.clock,
    newRunId: randomUUID,
    chain: (name) => lookup(name),
    execute: (plan, input, runOptions) => executeChain(host, plan, registry.current(), input, runOptions),
    refuse: (chain, runId, error, input, runOptions) => failedBeforeStart(host, chain, runId, error, input, runOptions),
  });
  closers.push(() => durable.close());

  async function reloadChains(): Promise<void> {
    if (chainsDir === undefined) return;
    // No tool catalogue: see the linking choice at the top of this file.
    set = keepLastGood(set, await loadChainSet(chainsDir, undefined, compiled));
  }
  await reloadChains();

  // ---------------------------------------------------------------------------------------------
  // PLUGINS: the one place plugin loading plugs in. The host loads every plugin folder into the
  // registry (and, with watch, reloads them); runs pick the new tools up through registry.current().
  // A plugin that fails to load is reported through `onPluginEvent` and leaves the engine running.
  // ---------------------------------------------------------------------------------------------
  const pluginsDir = options.pluginsDir !== undefined ? resolve(options.pluginsDir) : undefined;
  let pluginHost: PluginHost | undefined;
  if (pluginsDir !== undefined) {
    pluginHost = createPluginHost({
      dir: pluginsDir,
      registry,
      watch: options.watch === true,
      isolation, log: host.log,
      ...(disk ? { cache: disk } : {}),
      ...(options.onPluginEvent ? { onEvent: options.onPluginEvent } : {}),
    });
    closers.push(() => pluginHost!.close());
    await pluginHost.ready;
  }

  if (options.watch === true && chainsDir !== undefined) {
    const watcher = watchFiles(chainsDir, { depth: 0 }, async () => {
      // A failed reload keeps the last good chains (loadChainSet reports, it does not throw).
      await reloadChains();
      options.onChainsReloaded?.({ chains: [...set.plans.keys()], diagnostics: set.diagnostics });
    });
    closers.push(() => watcher.close());
    await watcher.ready;
  }

  function unknownChain(name: string): { code: ErrorCode; message: string } {
    const file = set.files.find((f) => f.name === name);
    if (file) {
      const own = set.diagnostics.filter((d) => d.file === file.file && d.severity === 'error');
      const first = own[0];
      return {
        code: first?.code ?? 'CHAIN_NOT_FOUND',
        message: `chain '${name}' in ${file.file} is invalid${first ? `: ${formatDiagnostic(first)}` : ''}${own.length > 1 ? ` (and ${own.length - 1} more; run toolchain validate)` : ''}`,
      };
    }
    const names = [...added.keys(), ...set.plans.keys()];
    const suggestion = didYouMean(name, names);
    return { code: 'CHAIN_NOT_FOUND', message: `no chain named '${name}'${suggestionSuffix(suggestion)}` };
  }

  return {
    async run(name, input, runOptions = {}) {
      checkConcurrency('concurrency', runOptions.concurrency);
      if (typeof name !== 'string') return failedBeforeStart(host, '', runOptions.runId, { code: 'CHAIN_NOT_FOUND', message: `the chain to run must be named by a string, got ${describeKind(name)}` }, input, runOptions);
      const plan = lookup(name);
      if (plan) return durable.start(plan, input, runOptions);
      return failedBeforeStart(host, name, runOptions.runId, unknownChain(name), input, runOptions);
    },
    resume: (runId, runOptions = {}) => durable.resume(runId, runOptions),
    cancel: async (runId) => (await durable.cancel(runId))?.status === 'running',
    runs: { list: (filter) => durable.list(filter), get: (runId) => durable.get(runId) },
    registerTool: (def) => registry.register(def),
    addChain(text, file = '<memory>') {
      const catalogue = { has: (n: string) => lookup(n) !== undefined, names: () => [...added.keys(), ...set.plans.keys()] };
      const { plan, diagnostics } = compileChain(text, { file, chains: catalogue, cache: compiled, plans: lookup });
      if (!plan || hasErrors(diagnostics)) {
        const first = diagnostics.find((d) => d.severity === 'error');
        throw new ToolchainError(first?.code ?? 'SCHEMA_INVALID', first ? formatDiagnostic(first) : 'the chain is invalid', diagnostics);
      }
      added.set(plan.name, plan);
      return plan;
    },
    chains: () => {
      const all = new Map(set.plans);
      for (const [n, p] of added) all.set(n, p);
      return [...all.values()];
    },
    chain: lookup,
    chainCallee: (chain, callOptions = {}) => chainCallee(host, chain.name, (plan, input, ctx) => durable.start(plan, input, { ...callOptions, signal: ctx.signal })),
    tools: () => registry.current(),
    diagnostics: () => set.diagnostics,
    plugins: () => pluginHost?.plugins() ?? [],
    reloadChains,
    async close() {
      for (const close of closers.splice(0)) await close();
    },
  };
}

/** A run that cannot start (unknown or invalid chain): the same result and events as any failed run. */
function failedBeforeStart(host: ExecutorHost, chain: string, runId: string | undefined, error: RunError, input: unknown, options: RunOptions): RunResult {
  const run_id = runId ?? host.newRunId();
  const timestamp = host.clock.now();
  const result: RunResult = { run_id, chain, status: 'failed', outputs: null, error, steps: {}, duration_ms: 0 };
  try {
    options.onEvent?.({ type: 'run:started', run_id, chain, timestamp, input });
    options.onEvent?.({ type: 'run:finished', run_id, chain, timestamp, status: 'failed', duration_ms: 0, outputs: null, error });
  } catch {
    // A listener's exception is its own problem.
  }
  return result;
}

/**
 * SPEC §3.3: an edit that breaks a chain file keeps the chain's last good version runnable (its
 * diagnostics are reported all the same); deleting the file removes the chain.
 */
function keepLastGood(previous: ChainSet, next: ChainSet): ChainSet {
  let plans: Map<string, ChainPlan> | undefined;
  for (const [name, plan] of previous.plans) {
    if (next.plans.has(name)) continue;
    const stillThere = next.files.some((f) => f.file === plan.file && (f.name === undefined || f.name === name));
    if (!stillThere) continue;
    plans ??= new Map(next.plans);
    plans.set(name, plan);
  }
  return plans ? { ...next, plans } : next;
}
