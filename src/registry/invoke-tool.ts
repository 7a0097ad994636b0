import { ToolchainError } from '../common/errors.js';
import { ExitAttempt } from '../common/exit-attempt.js';
import { raceSignal } from '../common/race.js';
import { canonicalJson } from './canonical-json.js';
import { checkedValue, checkResult, type ResultRules } from './check-result.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import { MISS, type ResultCache } from './result-cache.js';
import type { DirectCall, ToolContext, ToolHandler } from './types.js';

// One call of a tool, in order: cache → circuit breaker → handler → result checks → record.
// Arguments arrive already prepared (validated, defaults filled): the call unit calls
// Tool.prepare first, and approval for dangerous tools sits between the two.
//
// The call unit (src/call) enforces timeouts by racing the call, so the common path never touches
// `ctx.signal` (its AbortController is made lazily: building one costs microseconds). Only a tool
// with a circuit breaker listens for the abort, so that a timed-out call counts as a failure even
// when its handler ignores the signal and never settles. What a handler throws goes out as it is:
// the call unit classifies it.

export interface InvokeParts {
  readonly handler: ToolHandler;
  readonly rules: ResultRules;
  readonly cache?: ResultCache;
  readonly breaker?: CircuitBreaker;
  /** With `stale_on_open`: the last good result (JSON) per arguments, served while the circuit is open. */
  readonly stale?: Map<string, string>;
}

const STALE_ENTRIES = 100;

function callHandler(parts: InvokeParts, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  try {
    return Promise.resolve(parts.handler(args, ctx));
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/**
 * callHandler, settling as soon as the signal aborts even if the handler never does: a breaker
 * must count a timed-out call that never returns as a failure.
 */
function callHandlerUntilAborted(parts: InvokeParts, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  return raceSignal(callHandler(parts, args, ctx), ctx.signal).catch((error: unknown) => {
    if (!ctx.signal.aborted || error !== ctx.signal.reason) throw error;
    throw error instanceof ToolchainError ? error : new ToolchainError('ABORTED', `the call to tool '${parts.rules.tool}' was cancelled`);
  });
}

/** A handler that tried to end the process (the CLI and servers turn process.exit into a throw). */
function exited(tool: string, attempt: ExitAttempt): ToolchainError {
  return new ToolchainError(
    'TOOL_CRASHED',
    `tool '${tool}' called process.exit(${attempt.exitCode === undefined ? '' : String(attempt.exitCode)}); plugin code may not end the engine's process (isolation: worker contains it)`,
  );
}

/** A cancellation by the caller says nothing about the tool's health; a timeout does. */
function countsAsFailure(error: unknown): boolean {
  return !(error instanceof ToolchainError && error.code === 'ABORTED');
}

/** A tool with no cache, breaker or stale results needs nothing around its handler but the checks: it can be called directly. */
export function createDirect(parts: InvokeParts): DirectCall | undefined {
  if (parts.cache !== undefined || parts.breaker !== undefined || parts.stale !== undefined) return undefined;
  const { handler, rules } = parts;
  return {
    call: handler,
    check: (result) => checkedValue(result, rules),
    fail: (thrown) => (thrown instanceof ExitAttempt ? exited(rules.tool, thrown) : thrown),
  };
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
    } catch (thrown) {
      const error = thrown instanceof ExitAttempt ? exited(rules.tool, thrown) : thrown;
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
