// createEngine wires the stages together: chain files → compiled plans, plugins and
// code → the tool registry, and the executor, which walks a plan with the tools of the moment.
//
// Linking choice: chains are compiled WITHOUT the tool catalogue, and a run resolves its tools
// when it starts (executor/call-sites.ts, cached per plan and ToolSet). So a chain whose tool is
// registered after the engine started becomes runnable at once, a plugin reload never leaves a
// chain "broken" until the chains are reloaded too, and a missing tool fails the run that needs
// it with TOOL_NOT_FOUND (naming the tool and the plugin that used to provide it). The static
// check against installed tools is `toolchain validate`'s job.

import { resolve } from 'node:path';
import { runIdSource } from '../common/run-ids.js';
import { openUserCache } from '../cache/index.js';
import { chainNotFound, compileChain, createCompileCache, loadChainSet, type ChainPlan, type ChainSet } from '../compiler/index.js';
import { describeKind, didYouMean, formatDiagnostic, hasErrors, suggestionSuffix, ToolchainError, type ErrorCode } from '../common/errors.js';
import { createBinder, createInputChecker, createSlots, executeChain, systemClock, type ExecutorHost, type RunOptions } from '../executor/index.js';
import type { LogEntry } from '../run-model/events.js';
import type { RunResult } from '../run-model/result.js';
import { chainCallee } from '../executor/step-callees.js';
import { callElement } from '../executor/element-call.js';
import { runAgent } from '../llm/agent/index.js';
import { DurableRuns } from '../runs/durable-runs.js';
import { withPlumbing } from '../runs/start-options.js';
import { Recovery } from '../runs/recovery.js';
import { leftWaiting, Waker } from '../runs/waker.js';
import { registerWaitMetrics } from '../observe/wait-metrics.js';
import { deliverEvent, type SentEvent } from '../runs/deliver-event.js';
import { decideApproval, pendingApprovals } from '../runs/approvals.js';
import { isMemoryStore } from '../store/memory.js';
import { openStore } from '../store/open-store.js';
import { checkConcurrency, checkLoadOptions, type EngineOptions } from './options.js';
import { keepLastGood } from './keep-last-good.js';
import { failedBeforeStart } from './refuse.js';
import { queuedRuns } from './queued-runs.js';
import { localRuns, observed, withDefaults, type RunDefaults } from './local-runs.js';
import type { RunPlace } from './run-place.js';
import { startEngineTriggers, type EngineTriggers } from './engine-triggers.js';
import type { Engine } from './types.js';
import { parseQueueUrl, queueStoreFailure } from '../queue/connection.js';
import { QueueSubmitter } from '../queue/submit.js';
import type { WorkerEngine } from '../queue/worker.js';
import { createPluginHost, watchFiles, type PluginHost } from '../plugins/index.js';
import { createRegistry, createSchemaCompiler } from '../registry/index.js';

const noLog = (): void => undefined;

export type { ChainsReloadedEvent, EngineOptions } from './options.js';
export type { Engine } from './types.js';

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  return (await openEngine(options)).engine;
}

/**
 * An engine, and the engine as a queue worker drives it (createWorker, worker.ts): that takes
 * what no public caller may — resuming with the worker's plumbing, and running one element of a
 * distributed for_each for another worker's run. Not exported by the package.
 */
export interface OpenedEngine {
  readonly engine: Engine;
  readonly worker: WorkerEngine;
}

export async function openEngine(options: EngineOptions = {}): Promise<OpenedEngine> {
  checkConcurrency('concurrency', options.concurrency);
  checkConcurrency('recoverIntervalMs', options.recoverIntervalMs);
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
  const observer = options.observe === true ? (await import('../observe/index.js')).createObserver({ chain: lookup }) : options.observe;
  const logger = options.logger && observer ? (entry: LogEntry): void => (options.logger!(entry), observer.log(entry)) : (options.logger ?? observer?.log ?? noLog);

  const newRunId = runIdSource();
  const host: ExecutorHost = {
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    slots: options.concurrency !== undefined && options.concurrency !== Infinity ? createSlots(options.concurrency) : undefined,
    newRunId,
    chain: lookup,
    log: logger,
    binder: createBinder(),
    checkInput: createInputChecker((schema) => registry.schemas.compile(schema, 'arguments').validate),
    agents: runAgent,
    ...(options.maxForEachElements !== undefined ? { maxForEachElements: options.maxForEachElements } : {}),
  };
  // With a queue, runs are recorded where the workers record them: by default the queue's Redis.
  const address = options.queue !== undefined ? parseQueueUrl(options.queue) : undefined;
  const store =
    typeof options.store === 'object'
      ? options.store
      : await openStore(options.store ?? address?.redis ?? 'memory:', { durability: options.durability ?? 'normal' }).catch((error: unknown) => {
          throw address !== undefined && options.store === undefined ? queueStoreFailure(address, error) : error;
        });
  if (typeof options.store !== 'object') closers.push(() => store.close());
  if (observer) registerWaitMetrics(observer.registry, store.waits);
  const durable = new DurableRuns({
    store,
    inProcess: isMemoryStore(store),
    writeBehind: options.durability === 'none',
    leaseMs: options.leaseMs ?? 30_000,
    clock: host.clock,
    newRunId,
    chain: (name) => lookup(name),
    execute: (plan, input, runOptions) => executeChain(host, plan, registry.current(), input, runOptions),
    refuse: (chain, runId, error, input, runOptions) => failedBeforeStart(host, chain, runId, error, input, runOptions),
    checkInput: host.checkInput,
    onParked: (_runId, wakeAt) => waker.parked(wakeAt),
    onEnded: (result) => waker.finished(result),
    ...(observer ? { onEvent: observer.onEvent } : {}),
  });
  closers.push(() => durable.close());
  const defaults: RunDefaults = { approve: options.approve, observer };
  // Runs that wait: woken here when their time comes (with `timers`: every run on the store;
  // otherwise those a caller here awaits), resumed from their recorded steps.
  const waker: Waker = new Waker({
    store,
    clock: host.clock,
    scope: options.timers === true ? 'all' : 'followed',
    intervalMs: options.wakeIntervalMs ?? 1_000,
    // A run of a chain this engine does not have (another process's, such as an MCP server's calls) is left to that process.
    wake: (run, followed) => (lookup(run.chain) === undefined ? Promise.resolve(leftWaiting(run, 'CHAIN_NOT_FOUND', `chain '${run.chain}' is not loaded here`)) : durable.resume(run.id, withPlumbing(withDefaults(defaults, followed ?? {}), { wake: true }))),
  });
  closers.unshift(() => waker.close());
  // Made below, once the runs can start.
  let recovery: Recovery | undefined;
  /** A run left waiting or unrecovered for want of its chain may go on once the chains change. */
  function chainsChanged(): void {
    waker.chainsChanged();
    recovery?.chainsChanged();
  }
  const submitter = address ? await QueueSubmitter.open(address, store, host.clock) : undefined;
  if (submitter) closers.unshift(() => submitter.close());

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
      ...(options.registryOptions?.env ? { env: options.registryOptions.env } : {}),
      ...(options.onPluginEvent ? { onEvent: options.onPluginEvent } : {}),
    });
    closers.push(() => pluginHost!.close());
    await pluginHost.ready;
  }

  // Made once the runs can start (below); a reload while the engine is still being made has none to tell.
  let triggers: EngineTriggers | undefined;
  if (options.watch === true && chainsDir !== undefined) {
    const watcher = watchFiles(chainsDir, { depth: 0 }, async () => {
      // A failed reload keeps the last good chains (loadChainSet reports, it does not throw).
      await reloadChains();
      chainsChanged();
      await triggers?.sync(); // the queue's schedules follow the chains at once
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
      // The code is the error's own; the place is said once, where the problem is.
      const at = first ? `${file.file}:${first.line ?? 1}:${first.col ?? 1}` : file.file;
      return {
        code: first?.code ?? 'CHAIN_NOT_FOUND',
        message: `chain '${name}' is invalid: ${at}${first ? ` ${first.message}` : ''}${own.length > 1 ? ` (and ${own.length - 1} more; run toolchain validate)` : ''}`,
      };
    }
    const suggestion = didYouMean(name, [...added.keys(), ...set.plans.keys()]);
    const { code, message } = chainNotFound(set, name, suggestionSuffix(suggestion));
    return { code, message };
  }

  if (options.timers === true && submitter === undefined) void waker.start();

  if (options.recover === true && submitter === undefined && !isMemoryStore(store)) {
    const recovering = new Recovery({
      store,
      clock: host.clock,
      resume: (runId) => durable.resume(runId, observed(observer, {})),
      cancel: (run) => durable.endCancelled(run),
      intervalMs: options.recoverIntervalMs ?? 5_000,
      onEvent: options.onRecovery ?? ((): void => undefined),
    });
    recovery = recovering;
    closers.unshift(() => recovering.close());
    void recovering.start();
  }

  const refuse = (chain: string, runId: string | undefined, error: { code: ErrorCode; message: string }, input: unknown, o: RunOptions): RunResult => failedBeforeStart(host, chain, runId, error, input, o);
  // Where this engine's runs execute, picked once: the methods below never ask which.
  const place: RunPlace = submitter
    ? queuedRuns({ submitter, store, lookup, unknownChain, newRunId: host.newRunId, clock: host.clock, refuse })
    : localRuns({ durable, store, waker, defaults, lookup, unknownChain, refuse, newRunId: host.newRunId });

  const allPlans = (): ChainPlan[] => [...set.plans.values(), ...added.values()];
  /** Sends an event: kept, delivered to waits (woken here), and looked at by this engine's event triggers at once. */
  async function emit(name: string, payload: unknown, id: string | undefined): Promise<SentEvent> {
    const sent = await deliverEvent(store, host.clock, name, payload, id);
    if (sent.delivered.length > 0) waker.poke();
    if (sent.new) triggers?.poke();
    return sent;
  }
  const fired = await startEngineTriggers({
    fire: options.triggers === true,
    queue: address,
    store,
    clock: host.clock,
    observer,
    plans: allPlans,
    unknownChain,
    start: (plan, input, runId) => place.fire(plan, input, runId),
    emit,
    secrets: options.secrets ?? process.env,
    ...(options.triggerIntervalMs !== undefined ? { intervalMs: options.triggerIntervalMs } : {}),
    ...(options.onTrigger ? { onTrigger: options.onTrigger } : {}),
  });
  triggers = fired;
  closers.unshift(() => fired.close());

  const engine: Engine = {
    // Not async: an async wrapper around the run's own promise would add a promise and two ticks per run.
    run(name, input, given = {}) {
      try {
        checkConcurrency('concurrency', given.concurrency);
      } catch (error) {
        return Promise.reject(error as Error);
      }
      if (typeof name !== 'string') return Promise.resolve(refuse('', given.runId, { code: 'CHAIN_NOT_FOUND', message: `the chain to run must be named by a string, got ${describeKind(name)}` }, input, given));
      return place.run(name, input, given);
    },
    metrics: async () => {
      if (!observer) throw new ToolchainError('USAGE', 'this engine keeps no metrics: create it with createEngine({ observe: true })');
      return observer.metrics();
    },
    observer,
    queued: submitter !== undefined,
    submit: (name, input, given = {}) => place.submit(name, input, given),
    resume: (runId, runOptions = {}) => place.resume(runId, runOptions),
    rerun: (runId, rerunOptions = {}) => place.rerun(runId, rerunOptions),
    cancel: (runId) => place.cancel(runId),
    emit: (name, payload, emitOptions = {}) => emit(name, payload, emitOptions.id),
    approvals: {
      list: () => pendingApprovals(store),
      async decide(id, decision) {
        const decided = await decideApproval(store, host.clock, id, decision);
        waker.poke();
        const d = decided.decision!;
        observer?.onEvent({ type: 'approval:decided', run_id: decided.run_id, chain: decided.chain, timestamp: d.at, id, approved: d.approved, by: d.by, ...(d.comment !== undefined ? { comment: d.comment } : {}) });
        return decided;
      },
    },
    triggers: fired.controls,
    runs: { list: (filter) => durable.list(filter), get: (runId) => durable.get(runId), waits: (filter) => store.waits.listWaits(filter), wakeAt: (runId) => store.waits.wakeAt(runId) },
    registerTool: (def) => registry.register(def),
    addChain(text, file = '<memory>') {
      const catalogue = { has: (n: string) => lookup(n) !== undefined, names: () => [...added.keys(), ...set.plans.keys()] };
      const { plan, diagnostics } = compileChain(text, { file, chains: catalogue, cache: compiled, plans: lookup });
      if (!plan || hasErrors(diagnostics)) {
        const first = diagnostics.find((d) => d.severity === 'error');
        throw new ToolchainError(first?.code ?? 'SCHEMA_INVALID', first ? formatDiagnostic(first) : 'the chain is invalid', diagnostics);
      }
      added.set(plan.name, plan);
      chainsChanged();
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
    async reloadChains() {
      await reloadChains();
      chainsChanged();
      await fired.sync();
    },
    async close() {
      for (const close of closers.splice(0)) await close();
    },
  };
  const worker: WorkerEngine = {
    chain: lookup,
    resume: (runId, runOptions = {}) => place.resume(runId, runOptions),
    cancel: (runId) => place.cancel(runId),
    async callElement(chain, step, element, runId, signal) {
      const plan = lookup(chain);
      if (plan === undefined) return { ok: false, error: unknownChain(chain), attempts: 0, started_at: host.clock.now(), duration_ms: 0 };
      return callElement(host, plan, registry.current(), step, element, runId, signal);
    },
  };
  return { engine, worker };
}
