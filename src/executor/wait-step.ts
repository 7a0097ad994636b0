import { CallFailure, type Callee, type WaitAsk } from '../call/index.js';
import { describeKind } from '../common/errors.js';
import { isRecord } from '../common/json.js';
import type { PlanStep, WaitPlan } from '../compiler/plan.js';
import type { Run } from './run.js';

// What a waiting step (`sleep`, `sleep_until`, `wait_for`, `approval`) calls: it asks the run's
// waits (the run store, through the durable runs) whether what it waits for is over. Over, its
// answer is the step's output (or its failure: WAIT_TIMEOUT, APPROVAL_DENIED); not over, the step
// parks (RUN_WAITING) — the attempt ends at once and holds nothing. As a Callee it gets what every
// step gets: `when`, retries (a WAIT_TIMEOUT can wait again: each attempt is a wait of its own),
// `on_error` and fallbacks.

const NO_ENV: Readonly<Record<string, string | undefined>> = Object.freeze({});

export function waitCallee(run: Run, step: PlanStep, wait: WaitPlan): Callee {
  return {
    describe: `wait '${step.name}'`,
    qualifiedName: step.name,
    dangerous: false,
    env: () => NO_ENV,
    prepare: (args) => ({ ok: true, args }),
    async invoke(args, ctx) {
      const waits = run.waits;
      if (waits === undefined) {
        throw new CallFailure({ code: 'USAGE', message: `step '${step.name}' waits, and this run keeps no waits (a chain an agent's model calls cannot wait, and neither can failure handling)` });
      }
      const key = `${run.waitKey(step.name, ctx.item)}${ctx.attempt > 1 ? `#${ctx.attempt}` : ''}`;
      const answer = await waits.wait(askOf(key, wait, args, step));
      if (!answer.over) throw new CallFailure({ code: 'RUN_WAITING', message: answer.why });
      if ('error' in answer) throw new CallFailure(answer.error);
      return answer.value;
    },
  };
}

function askOf(key: string, wait: WaitPlan, args: Record<string, unknown>, step: PlanStep): WaitAsk {
  switch (wait.type) {
    case 'sleep':
      return { key, kind: 'sleep', forMs: wait.ms };
    case 'sleep_until':
      return { key, kind: 'sleep', untilMs: timeOf(args.until, step) };
    case 'event': {
      const match = args.match;
      if (!isRecord(match)) throw new CallFailure({ code: 'VALIDATION_FAILED', message: `wait_for.match of step '${step.name}' must be an object, got ${describeKind(match)}` });
      return { key, kind: 'event', name: wait.event, match, ...(wait.timeoutMs !== undefined ? { forMs: wait.timeoutMs } : {}) };
    }
    case 'approval':
      return {
        key,
        kind: 'approval',
        ...(wait.timeoutMs !== undefined ? { forMs: wait.timeoutMs } : {}),
        approval: { prompt: String(args.prompt), step: key, ...(wait.approvers !== undefined ? { approvers: wait.approvers } : {}) },
      };
  }
}

/** `sleep_until`'s value: an ISO 8601 timestamp with a date (`2026-12-24T09:00:00Z`), as milliseconds since the epoch. */
function timeOf(value: unknown, step: PlanStep): number {
  const at = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new CallFailure({ code: 'VALIDATION_FAILED', message: `sleep_until of step '${step.name}' must be an ISO 8601 timestamp (2026-12-24T09:00:00Z), got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : describeKind(value)}` });
  }
  return at;
}
