import type { Callee } from '../call/index.js';
import { HandlerError } from '../common/errors.js';
import type { StepMocks } from '../executor/index.js';
import type { CallContext } from '../call/call-context.js';

// A mocked step calls this instead of its tool: a fixed output, an error code, or one
// result per call (the last repeats), each optionally after a delay. The step's own policies
// still apply around it (timeout, retry, fallback), and its arguments are still validated by the
// real tool's parameters when that tool is installed, so a test also checks the input_map.

/** One result of a mocked call. */
export interface MockResult {
  readonly output?: unknown;
  /** An error code (`TIMEOUT`, `HTTP_ERROR`, …): the call fails with it. */
  readonly error?: string;
  readonly message?: string;
  /** Milliseconds to wait first (the step's timeout still applies). */
  readonly delayMs?: number;
}

/** What a step is mocked with: one result for every call, or one per attempt. */
export type MockSpec = MockResult | { readonly sequence: readonly MockResult[] };

/** How many times each mocked step was called, by step key. */
export type MockCalls = Map<string, number>;

const NO_ENV = Object.freeze({});

export function mockCallee(step: string, spec: MockSpec, real: Callee | undefined, calls?: MockCalls): Callee {
  // A sequence gives one entry per call of the step: per attempt, and on for a repeat step's next
  // round; a for_each element's calls count by its own attempts (elements share the callee).
  let count = 0;
  return {
    describe: real?.describe ?? `mock of step '${step}'`,
    qualifiedName: real?.qualifiedName ?? step,
    // Nothing real runs: there is nothing to approve.
    dangerous: false,
    ...(real?.timeoutMs !== undefined ? { timeoutMs: real.timeoutMs } : {}),
    env: () => NO_ENV,
    prepare: real ? (args) => real.prepare(args) : (args) => ({ ok: true, args }),
    async invoke(_args, ctx) {
      calls?.set(step, (calls.get(step) ?? 0) + 1);
      const n = ctx.item === undefined ? ++count : ctx.attempt;
      const result = 'sequence' in spec ? spec.sequence[Math.min(n, spec.sequence.length) - 1]! : spec;
      if (result.delayMs !== undefined && result.delayMs > 0) await delay(result.delayMs, ctx);
      if (result.error !== undefined) throw new HandlerError(result.error, result.message ?? `mocked error ${result.error}`);
      return result.output === undefined ? null : (structuredClone(result.output) as unknown);
    },
  };
}

function delay(ms: number, ctx: CallContext): Promise<void> {
  const signal = ctx.signal;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Mocks by step key: `locate`, or `first›locate` (also `first>locate`) for step `locate` of the
 * sub-chain that step `first` runs.
 */
export function stepMocks(specs: ReadonlyMap<string, MockSpec>, calls?: MockCalls, prefix = ''): StepMocks | undefined {
  if (specs.size === 0) return undefined;
  return {
    callee(step, real) {
      const spec = specs.get(step);
      return spec === undefined ? undefined : mockCallee(prefix + step, spec, real, calls);
    },
    child(step) {
      const inner = new Map<string, MockSpec>();
      for (const [key, spec] of specs) {
        const m = /^([^›>]+)\s*[›>]\s*(.+)$/.exec(key);
        if (m && m[1]!.trim() === step) inner.set(m[2]!.trim(), spec);
      }
      return stepMocks(inner, calls, `${prefix}${step}›`);
    },
  };
}
