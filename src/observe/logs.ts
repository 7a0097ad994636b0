import type { Logger } from 'pino';
import type { RunEvent, LogEntry } from '../run-model/events.js';

// Structured logs: one JSON line per run event, and one per `ctx.log()` call of a tool,
// each with the run id and, for steps, the step and attempt. Outputs and inputs are not logged
// (they can be large or secret); errors are, with their code. Levels: a failed step or run is
// `error`, a retry `warn`, a step's start and agent turns `debug`, everything else `info` — so at
// info a step costs one line, written when it ends, with its duration and last attempt.
// Each run logs through a pino child that carries its run id and chain: pino serialises those
// once per run instead of once per line.

export interface RunLogger {
  onEvent(event: RunEvent): void;
  /** Give this to `createEngine({ logger })`: tools' `ctx.log()` lines. */
  log(entry: LogEntry): void;
}

type LoggedError = { readonly code: string; readonly message: string } | undefined;

/**
 * An error as the log shows it. An INPUT_INVALID message quotes the values it refused (`but got
 * string "…"`), which can be a caller's secret: the caller has the message in its answer; the
 * log keeps the code and how many problems there were.
 */
function loggable<E extends LoggedError>(error: E): E {
  if (error === undefined || error.code !== 'INPUT_INVALID') return error;
  const count = error.message.split('; ').length;
  return { ...error, message: `the input does not match the chain's inputs (${count} problem${count === 1 ? '' : 's'}; the caller was told which; inputs are not logged)` };
}

export function createRunLogger(logger: Logger): RunLogger {
  const runs = new Map<string, Logger>();
  const of = (e: RunEvent): Logger => runs.get(e.run_id) ?? logger.child({ run_id: e.run_id, chain: e.chain });

  function onEvent(e: RunEvent): void {
    switch (e.type) {
      case 'run:started': {
        const child = logger.child({ run_id: e.run_id, chain: e.chain });
        runs.set(e.run_id, child);
        child.info({ event: e.type, parent: e.parent });
        return;
      }
      case 'run:finished': {
        const child = of(e);
        runs.delete(e.run_id);
        if (e.status !== 'succeeded') child[e.status === 'failed' || e.status === 'compensation_failed' ? 'error' : 'warn']({ event: e.type, parent: e.parent, status: e.status, duration_ms: e.duration_ms, error: loggable(e.error) });
        else child.info({ event: e.type, parent: e.parent, status: e.status, duration_ms: e.duration_ms });
        return;
      }
      case 'step:started':
        of(e).debug({ event: e.type, step: e.step, phase: e.phase, attempt: e.attempt });
        return;
      case 'step:retrying':
        of(e).warn({ event: e.type, step: e.step, phase: e.phase, attempt: e.attempt, item: e.item, duration_ms: e.duration_ms, delay_ms: e.delay_ms, fallback: e.fallback, error: loggable(e.error) });
        return;
      case 'step:progress':
        of(e).debug({ event: e.type, step: e.step, attempt: e.attempt, item: e.item, progress: e.progress, total: e.total, message: e.message });
        return;
      case 'step:succeeded':
        of(e).info({ event: e.type, step: e.step, phase: e.phase, attempt: e.attempt, duration_ms: e.duration_ms, fallback: e.fallback });
        return;
      case 'step:failed':
        of(e).error({ event: e.type, step: e.step, phase: e.phase, attempt: e.attempt, duration_ms: e.duration_ms, error: loggable(e.error) });
        return;
      case 'step:skipped':
        of(e).info({ event: e.type, step: e.step, phase: e.phase, attempt: 0, reason: e.reason });
        return;
      case 'step:round':
        of(e).info({ event: e.type, step: e.step, round: e.round, max_rounds: e.max_rounds, attempts: e.attempts, duration_ms: e.duration_ms, done: e.done, next_at: e.next_at });
        return;
      case 'step:waiting':
        of(e).info({ event: e.type, step: e.step, waiting_for: e.waiting_for });
        return;
      case 'run:waiting': {
        // Parked: the run is in no process until it is woken (then run:started again).
        const child = of(e);
        if (e.parent === undefined) runs.delete(e.run_id);
        child.info({ event: e.type, parent: e.parent, waits: e.waits, wake_at: e.wake_at });
        return;
      }
      case 'run:woken':
        of(e).info({ event: e.type });
        return;
      case 'approval:requested':
        // The arguments stay out of the log, as inputs do: the request in the store has them.
        of(e).info({ event: e.type, approval: e.id, step: e.step, tool: e.tool, until: e.until });
        return;
      case 'approval:decided':
        of(e).info({ event: e.type, approval: e.id, approved: e.approved, by: e.by });
        return;
      case 'agent:turn':
        of(e).debug({ event: e.type, step: e.step, attempt: e.attempt, turn: e.turn, usage: e.usage });
        return;
      case 'agent:tool_call':
        of(e).debug({ event: e.type, step: e.step, attempt: e.attempt, tool: e.name, is_error: e.is_error, duration_ms: e.duration_ms });
        return;
    }
  }

  function log(entry: LogEntry): void {
    // The tool's own fields first, so that they cannot overwrite which run and step wrote the line.
    logger.info({ ...entry.fields, source: 'tool', run_id: entry.run_id, step: entry.step, attempt: entry.attempt, ...(entry.item !== undefined ? { item: entry.item } : {}) }, entry.message);
  }

  return { onEvent, log };
}
