import { ToolchainError } from '../common/errors.js';
import { canonicalJson } from './canonical-json.js';
import { checkResult, type ResultRules } from './check-result.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import { abortError, toToolError } from './handler-error.js';
import type { EnvView } from './restrict-env.js';
import { MISS, type ResultCache } from './result-cache.js';
import type { ToolContext, ToolHandler } from './types.js';

// One call of a tool, in order: cache → circuit breaker → handler (with a restricted env) →
// result checks → record. Arguments arrive already prepared (validated, defaults filled): the
// executor calls Tool.prepare first, and approval for dangerous tools sits between the two.
//
// The executor enforces timeouts by racing the call, so the common path never touches
// `ctx.signal` (the executor makes its AbortController lazily: building one costs microseconds).
// Only a tool with a circuit breaker listens for the abort, so that a timed-out call counts as
// a failure even when its handler ignores the signal and never settles.

export interface InvokeParts {
  readonly handler: ToolHandler;
  readonly env: EnvView;
  readonly rules: ResultRules;
  readonly cache?: ResultCache;
  readonly breaker?: CircuitBreaker;
  /** With `stale_on_open`: the last good result (JSON) per arguments, served while the circuit is open. */
  readonly stale?: Map<string, string>;
}

const STALE_ENTRIES = 100;

/** The handler's ctx: the caller's, forwarded without copying (no getter is read early), with the tool's own env. */
class ScopedContext implements ToolContext {
  readonly #inner: ToolContext;
  readonly run_id: string;
  readonly step: string;
  readonly attempt: number;
  readonly env: Readonly<Record<string, string | undefined>>;

  constructor(inner: ToolContext, env: Readonly<Record<string, string | undefined>>) {
    this.#inner = inner;
    this.run_id = inner.run_id;
    this.step = inner.step;
    this.attempt = inner.attempt;
    this.env = env;
  }

  get signal(): AbortSignal {
    return this.#inner.signal;
  }

  log(message: string, fields?: Record<string, unknown>): void {
    this.#inner.log(message, fields);
  }
}

function callHandler(parts: InvokeParts, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  const tool = parts.rules.tool;
  let returned: unknown;
  try {
    returned = parts.handler(args, new ScopedContext(ctx, parts.env()));
  } catch (error) {
    return Promise.reject(toToolError(error, tool));
  }
  return Promise.resolve(returned).then(undefined, (error: unknown) => {
    throw toToolError(error, tool);
  });
}

/** callHandler, settling as soon as the signal aborts even if the handler never does. */
function callHandlerUntilAborted(parts: InvokeParts, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  const { signal } = ctx;
  if (signal.aborted) return Promise.reject(abortError(signal, parts.rules.tool));
  return new Promise<unknown>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal, parts.rules.tool));
    signal.addEventListener('abort', onAbort, { once: true });
    callHandler(parts, args, ctx)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A cancellation by the caller says nothing about the tool's health; a timeout does. */
function countsAsFailure(error: unknown): boolean {
  return !(error instanceof ToolchainError && error.code === 'ABORTED');
}

export function createInvoke(parts: InvokeParts): (args: Record<string, unknown>, ctx: ToolContext) => Promise<unknown> {
  const { cache, breaker, stale, rules } = parts;
  const keyed = cache !== undefined || stale !== undefined;

  return async (args, ctx) => {
    const key = keyed ? canonicalJson(args) : '';
    if (cache) {
      const hit = cache.get(key);
      if (hit !== MISS) return hit;
    }
    if (breaker && !breaker.tryPass()) {
      const last = stale?.get(key);
      if (last !== undefined) return JSON.parse(last) as unknown;
      throw new ToolchainError(
        'CIRCUIT_OPEN',
        `tool '${rules.tool}' failed too many times in a row; its circuit breaker is open and calls fail fast until it resets`,
      );
    }
    let checked;
    try {
      checked = checkResult(await (breaker ? callHandlerUntilAborted : callHandler)(parts, args, ctx), rules);
    } catch (error) {
      if (breaker) {
        if (countsAsFailure(error)) breaker.onFailure();
        else breaker.release();
      }
      throw error;
    }
    breaker?.onSuccess();
    if (keyed) {
      const json = checked.json ?? JSON.stringify(checked.value);
      cache?.set(key, json);
      if (stale) {
        stale.delete(key);
        if (stale.size >= STALE_ENTRIES) stale.delete(stale.keys().next().value as string);
        stale.set(key, json);
      }
    }
    return checked.value;
  };
}
