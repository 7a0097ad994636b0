import { relative } from 'node:path';
import { ToolchainError } from '../../common/errors.js';
import { notJsonError } from '../../registry/build-tool.js';
import type { ToolContext, ToolHandler } from '../../registry/types.js';
import { openChannel, type Channel, type WorkerKind } from './channel.js';
import type { FromWorker, HandlerRef, WireError } from './protocol.js';

// The workers of one isolated plugin version, and the handlers that forward to them. Each worker
// runs one call at a time (so a stuck or crashing call takes nobody else down with it); up to
// `workers` are started on demand, and calls beyond that wait in order.
// - Cancel or timeout (the call's signal): the caller is let go at once, the worker's `ctx.signal`
//   fires, and a worker that has not finished the call `graceMs` later is terminated and replaced
//   — the one way out of `while(true){}`.
// - A worker that ends during a call (`process.exit`, an uncaught exception, out of memory) fails
//   that call with TOOL_CRASHED; one whose call can never settle fails it with TOOL_STALLED.
// - A worker holds the engine's process open only while it runs a call.
// - `retire()` (a reload replaced this version, or the engine closed) ends idle workers now and
//   busy ones after their call; a run still holding this version can call it again.
// - Every worker runs the same code: the module texts the first worker to need a file read from
//   disk are kept, and each worker started later reads them instead of the files, which may have
//   changed since (a reload started a new version; this one's runs keep it).

export interface PoolSettings {
  readonly kind: WorkerKind;
  readonly plugin: string;
  /** The plugin folder's real path: messages name handler files relative to it. */
  readonly dir: string;
  readonly entry: string;
  readonly memoryMb: number;
  readonly workers: number;
  readonly graceMs: number;
  /** The engine's disk cache folder, if it has one. */
  readonly cacheDir?: string;
  /** The workers' environment (worker-env.ts). */
  readonly env: Readonly<Record<string, string>>;
  /** Output and crashes that belong to no call, with the plugin named. */
  readonly log: (message: string, fields: Record<string, unknown>) => void;
}

export interface LoadProblem {
  readonly tool: string;
  readonly message: string;
}

interface Call {
  readonly id: number;
  readonly ref: HandlerRef;
  /** `plugin/tool` */
  readonly name: string;
  /** `tool 'plugin/tool'`, as messages name it. */
  readonly tool: string;
  readonly args: unknown;
  readonly ctx: ToolContext;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
  slot: Slot | undefined;
  detach: (() => void) | undefined;
}

interface Slot {
  readonly channel: Channel;
  call: Call | undefined;
  /** What the worker said before it crashed. */
  crash: string | undefined;
  /** Terminated by the pool (grace over, retired): its end is expected. */
  killed: boolean;
  killTimer: ReturnType<typeof setTimeout> | undefined;
  readonly loads: Map<number, (problems: readonly LoadProblem[]) => void>;
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Call[] = [];
  private nextId = 0;
  private retired = false;
  /** This version's module texts, by file. */
  private readonly sources = new Map<string, string>();

  constructor(private readonly s: PoolSettings) {}

  /** The handler of one tool: each call runs in a worker. */
  handler(ref: HandlerRef): ToolHandler {
    const name = `${this.s.plugin}/${ref.tool}`;
    return (args, ctx) => this.call(ref, name, args, ctx);
  }

  /** Imports every handler in a worker now; resolves with what failed to load. */
  preload(refs: readonly HandlerRef[]): Promise<readonly LoadProblem[]> {
    const slot = this.slots.find((s) => !s.killed) ?? this.spawn();
    const id = ++this.nextId;
    slot.channel.ref();
    return new Promise((resolve) => {
      slot.loads.set(id, resolve);
      slot.channel.post({ t: 'load', id, handlers: refs });
    });
  }

  retire(): void {
    this.retired = true;
    for (const slot of [...this.slots]) if (slot.call === undefined) this.kill(slot);
  }

  private call(ref: HandlerRef, name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const signal = ctx.signal;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const call: Call = { id: ++this.nextId, ref, name, tool: `tool '${name}'`, args, ctx, resolve, reject, settled: false, slot: undefined, detach: undefined };
      const onAbort = (): void => this.abort(call, signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      call.detach = () => signal.removeEventListener('abort', onAbort);
      this.dispatch(call);
    });
  }

  private dispatch(call: Call): void {
    const idle = this.slots.find((s) => s.call === undefined && !s.killed);
    if (idle) return this.run(idle, call);
    if (this.slots.filter((s) => !s.killed).length < this.s.workers) return this.run(this.spawn(), call);
    this.queue.push(call);
  }

  private run(slot: Slot, call: Call): void {
    slot.call = call;
    call.slot = slot;
    slot.channel.ref();
    const { ctx } = call;
    try {
      slot.channel.post({
        t: 'call',
        id: call.id,
        handler: call.ref,
        args: call.args,
        ctx: { attempt: ctx.attempt, run_id: ctx.run_id, step: ctx.step, idempotencyKey: ctx.idempotencyKey, env: { ...ctx.env } },
      });
    } catch (error) {
      this.settle(call, false, new ToolchainError('VALIDATION_FAILED', `the arguments of ${call.tool} cannot be sent to its worker: ${(error as Error).message}`));
      this.free(slot);
    }
  }

  private spawn(): Slot {
    // A channel's events come asynchronously, after `slot` is set.
    let slot: Slot | undefined;
    const channel = openChannel(this.s, {
      message: (m) => this.onMessage(slot!, m),
      output: (stream, text) => this.output(slot!, stream, text),
      exit: (how) => this.onExit(slot!, how),
    });
    slot = { channel, call: undefined, crash: undefined, killed: false, killTimer: undefined, loads: new Map() };
    // Before any call: messages arrive in order.
    if (this.sources.size > 0) channel.post({ t: 'sources', files: [...this.sources] });
    channel.unref();
    this.slots.push(slot);
    return slot;
  }

  private onMessage(slot: Slot, m: FromWorker): void {
    const call = slot.call;
    switch (m.t) {
      case 'done':
        if (call?.id !== m.id) return;
        if (m.ok) this.settle(call, true, m.value);
        else this.settle(call, false, this.rebuild(call, m.error));
        return this.free(slot);
      case 'log':
        if (call?.id === m.id) call.ctx.log(m.message, m.fields);
        return;
      case 'out':
        return this.output(slot, m.stream, m.text);
      case 'stalled':
        // Only an abort from here can settle a waiting call: this worker is no reason to stay up.
        if (call !== undefined && m.waiting.includes(call.id)) slot.channel.unref();
        if (call === undefined || !m.ids.includes(call.id)) return;
        this.settle(call, false, new ToolchainError('TOOL_STALLED', `${call.tool} never settled: its handler waits for something that can no longer happen (nothing else was pending in its worker)`));
        return this.free(slot);
      case 'crash':
        slot.crash = m.message;
        return;
      case 'source':
        if (!this.sources.has(m.file)) this.sources.set(m.file, m.text);
        return;
      case 'loaded':
        slot.loads.get(m.id)?.(m.problems);
        slot.loads.delete(m.id);
        if (slot.call === undefined && slot.loads.size === 0) slot.channel.unref();
        return;
    }
  }

  private output(slot: Slot, stream: 'stdout' | 'stderr', text: string): void {
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (slot.call) slot.call.ctx.log(line, { stream });
      else this.s.log(line, { plugin: this.s.plugin, stream });
    }
  }

  private onExit(slot: Slot, how: string): void {
    clearTimeout(slot.killTimer);
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    const why = slot.crash !== undefined ? `an uncaught exception: ${slot.crash}` : how;
    for (const resolve of slot.loads.values()) resolve([{ tool: '*', message: `its worker ended while loading (${why})` }]);
    const call = slot.call;
    if (call && !call.settled) {
      this.settle(call, false, new ToolchainError('TOOL_CRASHED', `${call.tool} crashed its ${this.s.kind === 'worker' ? 'worker thread' : 'worker process'}: ${why}`));
    } else if (!slot.killed) {
      this.s.log(`a worker of plugin '${this.s.plugin}' ended between calls: ${why}`, { plugin: this.s.plugin, stream: 'stderr' });
    }
    slot.call = undefined;
    slot.killed = true;
    // Whoever waits gets a fresh worker.
    const next = this.queue.shift();
    if (next) this.dispatch(next);
  }

  private abort(call: Call, reason: unknown): void {
    const slot = call.slot;
    if (slot === undefined) {
      const at = this.queue.indexOf(call);
      if (at >= 0) this.queue.splice(at, 1);
      return this.settle(call, false, reason);
    }
    const error = reason as { code?: unknown; message?: unknown } | undefined;
    slot.channel.post({ t: 'abort', id: call.id, code: typeof error?.code === 'string' ? error.code : 'ABORTED', message: String(error?.message ?? 'cancelled') });
    this.settle(call, false, reason);
    // A handler that does not stop within the grace period loses its worker.
    slot.killTimer = setTimeout(() => {
      if (slot.call === call) this.kill(slot);
    }, this.s.graceMs);
  }

  private kill(slot: Slot): void {
    if (slot.killed) return;
    slot.killed = true;
    slot.channel.terminate();
  }

  private free(slot: Slot): void {
    clearTimeout(slot.killTimer);
    slot.killTimer = undefined;
    slot.call = undefined;
    if (slot.killed) return;
    const next = this.queue.shift();
    if (next) return this.run(slot, next);
    slot.channel.unref();
    if (this.retired) this.kill(slot);
  }

  private settle(call: Call, ok: boolean, value: unknown): void {
    if (call.settled) return;
    call.settled = true;
    call.detach?.();
    if (ok) call.resolve(value);
    else call.reject(value);
  }

  private rebuild(call: Call, error: WireError): Error {
    switch (error.kind) {
      case 'thrown':
        return error.code !== undefined ? Object.assign(new Error(error.message), { code: error.code }) : new Error(error.message);
      case 'load':
        return new ToolchainError('HANDLER_LOAD', `${call.tool}: ${relative(this.s.dir, call.ref.file)}: ${error.message}`);
      case 'not-json':
        return notJsonError(call.name, error.path, error.reason);
    }
  }
}
