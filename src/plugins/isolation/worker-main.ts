import { parentPort, workerData } from 'node:worker_threads';
import { openDiskCache } from '../../cache/disk-cache.js';
import { checkJson } from '../../registry/check-json.js';
import type { ToolContext, ToolHandler } from '../../registry/types.js';
import { createModuleLoader } from '../evaluate-module.js';
import { pickExport } from '../pick-export.js';
import type { CallFields, FromWorker, HandlerRef, ToWorker, WireError } from './protocol.js';

// The far side of an isolated plugin: the entry of each worker thread (isolation: worker) or
// child process (isolation: process). It loads the plugin's handler modules with the same loader
// as the engine (evaluate-module.ts) and runs one call at a time, as the engine asks. A call's
// `ctx.log` and whatever the worker writes to stdout/stderr go back as messages (so nothing a
// handler prints reaches the engine's stdout); `ctx.signal` fires when the engine sends `abort`.
// While a call is in flight the link to the engine does not keep this worker's event loop alive,
// so the loop running empty with the call unsettled means only the engine can still settle it:
// by aborting it, if the handler listens to `ctx.signal` (it is then `waiting`, and the engine
// stops counting this worker as work to wait for); otherwise nothing can, and the engine fails it
// (`stalled`) instead of waiting for ever. An uncaught exception is reported, then ends the
// worker: the engine fails the call in flight and starts a fresh worker.

interface Link {
  post(message: FromWorker, then?: () => void): void;
  listen(receive: (message: ToWorker) => void): void;
  /** Keep this worker alive while idle, waiting for calls. */
  hold(): void;
  /** Let the event loop end if nothing but the link is left. */
  release(): void;
}

function openLink(): Link {
  if (parentPort) {
    const port = parentPort;
    return {
      post: (m, then) => {
        port.postMessage(m);
        then?.();
      },
      listen: (receive) => port.on('message', receive),
      hold: () => port.ref(),
      release: () => port.unref(),
    };
  }
  const send = process.send?.bind(process);
  if (!send) throw new Error('worker-main runs in a worker thread or a forked child process');
  // The engine went away: so does this process.
  process.on('disconnect', () => process.exit(0));
  return {
    post: (m, then) => void send(m, undefined, {}, () => then?.()),
    listen: (receive) => process.on('message', receive as (m: unknown) => void),
    hold: () => process.channel?.ref(),
    release: () => process.channel?.unref(),
  };
}

const link = openLink();
// The engine's disk cache, when it has one: a module it transformed is not transformed again here.
const cacheDir = parentPort ? (workerData as { cacheDir?: string } | null)?.cacheDir : process.argv[2];
const cache = cacheDir !== undefined ? openDiskCache(cacheDir, { onWarning: () => undefined }) : undefined;
// The plugin version's module texts: those the engine sends (read by this version's other
// workers), and those this worker reads from disk first, which the engine then passes on.
const read = new Map<string, string>();
const sources = {
  get: (file: string) => read.get(file),
  has: (file: string) => read.has(file),
  set: (file: string, text: string) => {
    read.set(file, text);
    link.post({ t: 'source', file, text });
  },
};
const loader = createModuleLoader({ ...(cache ? { cache } : {}), sources });
const handlers = new Map<string, Promise<ToolHandler>>();
const calls = new Map<number, WorkerContext>();

class LoadError extends Error {}

function handlerOf(ref: HandlerRef): Promise<ToolHandler> {
  const key = `${ref.tool}\u0000${ref.file}\u0000${ref.exportName ?? ''}`;
  let found = handlers.get(key);
  if (!found) {
    found = loader.evaluate(ref.file).then(
      (exports) => {
        const picked = pickExport(exports, ref.tool, ref.exportName);
        if (!picked.ok) throw new LoadError(picked.message);
        return picked.handler;
      },
      (error: unknown) => {
        throw new LoadError(`failed to load: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
    handlers.set(key, found);
  }
  return found;
}

class WorkerContext implements ToolContext {
  readonly attempt: number;
  readonly run_id: string;
  readonly step: string;
  readonly idempotencyKey: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  private controller: AbortController | undefined;
  private reason: Error | undefined;
  /** Reported `waiting` to the engine: it no longer keeps this worker's loop going. */
  parked = false;

  constructor(
    private readonly id: number,
    fields: CallFields,
  ) {
    this.attempt = fields.attempt;
    this.run_id = fields.run_id;
    this.step = fields.step;
    this.idempotencyKey = fields.idempotencyKey;
    this.env = Object.freeze(fields.env);
  }

  /** The handler took its signal: an abort from the engine can still settle it. */
  get listens(): boolean {
    return this.controller !== undefined;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  log(message: string, fields?: Record<string, unknown>): void {
    const text = String(message);
    try {
      link.post({ t: 'log', id: this.id, message: text, ...(fields !== undefined ? { fields } : {}) });
    } catch {
      // Fields that cannot be copied (functions, say): keep what JSON can say of them.
      link.post({ t: 'log', id: this.id, message: text, fields: { fields: safeText(fields) } });
    }
  }
}

function safeText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '[unreadable]';
  }
}

function thrown(error: unknown): WireError {
  try {
    if (error instanceof LoadError) return { kind: 'load', message: error.message };
    const code = (error as { code?: unknown } | null)?.code;
    const message = error instanceof Error ? error.message : typeof error === 'string' ? error : `threw ${safeText(error)}`;
    return { kind: 'thrown', message: String(message), ...(typeof code === 'string' && code !== '' ? { code } : {}) };
  } catch {
    return { kind: 'thrown', message: 'threw something that could not be read' };
  }
}

function finish(id: number, value: unknown): void {
  try {
    link.post({ t: 'done', id, ok: true, value });
  } catch (error) {
    // Not cloneable (a function, a symbol, a Proxy): say where, as the engine would for JSON.
    const check = checkJson(value);
    const error2: WireError = check.ok ? { kind: 'not-json', path: '', reason: `it cannot be copied out of its worker (${(error as Error).message})` } : { kind: 'not-json', path: check.path, reason: check.reason };
    link.post({ t: 'done', id, ok: false, error: error2 });
  }
}

async function call(id: number, ref: HandlerRef, args: unknown, fields: CallFields): Promise<void> {
  const ctx = new WorkerContext(id, fields);
  calls.set(id, ctx);
  link.release();
  try {
    const handler = await handlerOf(ref);
    const value = await handler(args as Record<string, unknown>, ctx);
    if (calls.has(id)) finish(id, value);
  } catch (error) {
    if (calls.has(id)) link.post({ t: 'done', id, ok: false, error: thrown(error) });
  } finally {
    calls.delete(id);
    if (![...calls.values()].some((c) => !c.parked)) link.hold();
  }
}

async function load(id: number, refs: readonly HandlerRef[]): Promise<void> {
  const problems: { tool: string; message: string }[] = [];
  for (const ref of refs) {
    try {
      await handlerOf(ref);
    } catch (error) {
      problems.push({ tool: ref.tool, message: error instanceof Error ? error.message : String(error) });
    }
  }
  link.post({ t: 'loaded', id, problems });
}

// What handlers print is the engine's to place (its log), never this worker's stdout.
for (const name of ['stdout', 'stderr'] as const) {
  const stream = process[name];
  stream.write = ((chunk: unknown, encoding?: unknown, done?: unknown): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
    link.post({ t: 'out', stream: name, text });
    const callback = typeof encoding === 'function' ? encoding : done;
    if (typeof callback === 'function') queueMicrotask(() => (callback as () => void)());
    return true;
  }) as typeof stream.write;
}

process.on('uncaughtException', (error: unknown) => {
  const message = error instanceof Error ? error.message : safeText(error);
  link.post({ t: 'crash', message }, () => process.exit(70));
});

process.on('beforeExit', () => {
  const stalled: number[] = [];
  const waiting: number[] = [];
  for (const [id, ctx] of calls) {
    if (ctx.parked) continue;
    if (ctx.listens) {
      ctx.parked = true;
      waiting.push(id);
    } else {
      stalled.push(id);
      calls.delete(id);
    }
  }
  link.hold();
  if (stalled.length > 0 || waiting.length > 0) link.post({ t: 'stalled', ids: stalled, waiting });
});

link.listen((m) => {
  switch (m.t) {
    case 'call':
      void call(m.id, m.handler, m.args, m.ctx);
      return;
    case 'abort':
      calls.get(m.id)?.abort(Object.assign(new Error(m.message), { code: m.code }));
      return;
    case 'load':
      void load(m.id, m.handlers);
      return;
    case 'sources':
      for (const [file, text] of m.files) if (!read.has(file)) read.set(file, text);
      return;
  }
});
link.hold();
