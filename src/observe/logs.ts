import type { Logger } from 'pino';
import type { RunEvent } from '../executor/events.js';
import type { LogEntry } from '../executor/types.js';

// Structured logs (SPEC §8): one JSON line per run event, and one per `ctx.log()` call of a tool,
// each with the run id and, for steps, the step and attempt. Outputs and inputs are not logged
// (they can be large or secret); errors are, with their code. Levels: a failed step or run is
// `error`, a retry `warn`, agent turns `debug`, everything else `info`.

export interface RunLogger {
  onEvent(event: RunEvent): void;
  /** Give this to `createEngine({ logger })`: tools' `ctx.log()` lines. */
  log(entry: LogEntry): void;
}

export function createRunLogger(logger: Logger): RunLogger {
  function onEvent(e: RunEvent): void {
    switch (e.type) {
      case 'run:started':
        logger.info({ event: e.type, run_id: e.run_id, chain: e.chain, parent: e.parent }, e.type);
        return;
      case 'run:finished':
        if (e.status === 'failed') logger.error({ event: e.type, run_id: e.run_id, chain: e.chain, parent: e.parent, status: e.status, duration_ms: e.duration_ms, error: e.error }, e.type);
        else logger.info({ event: e.type, run_id: e.run_id, chain: e.chain, parent: e.parent, status: e.status, duration_ms: e.duration_ms }, e.type);
        return;
      case 'step:started':
        logger.info({ event: e.type, run_id: e.run_id, chain: e.chain, step: e.step, attempt: e.attempt }, e.type);
        return;
      case 'step:retrying':
        logger.warn({ event: e.type, run_id: e.run_id, chain: e.chain, step: e.step, attempt: e.attempt, item: e.item, duration_ms: e.duration_ms, delay_ms: e.delay_ms, fallback: e.fallback, error: e.error }, e.type);
        return;
      case 'step:succeeded':
        logger.info({ event: e.type, run_id: e.run_id, chain: e.chain, step: e.step, attempt: e.attempt, attempts: e.attempts, duration_ms: e.duration_ms, fallback: e.fallback }, e.type);
        return;
      case 'step:failed':
        logger.error({ event: e.type, run_id: e.run_id, chain: e.chain, step: e.step, attempt: e.attempt, attempts: e.attempts, duration_ms: e.duration_ms, error: e.error }, e.type);
        return;
      case 'step:skipped':
        logger.info({ event: e.type, run_id: e.run_id, chain: e.chain, step: e.step, attempt: 0, reason: e.reason }, e.type);
        return;
      case 'agent:turn':
        logger.debug({ event: e.type, run_id: e.run_id, chain: e.chain, step: e.step, attempt: e.attempt, turn: e.turn, usage: e.usage }, e.type);
        return;
      case 'agent:tool_call':
        logger.debug({ event: e.type, run_id: e.run_id, chain: e.chain, step: e.step, attempt: e.attempt, tool: e.name, is_error: e.is_error, duration_ms: e.duration_ms }, e.type);
        return;
    }
  }

  function log(entry: LogEntry): void {
    // The tool's own fields first, so that they cannot overwrite which run and step wrote the line.
    logger.info({ ...entry.fields, source: 'tool', run_id: entry.run_id, step: entry.step, attempt: entry.attempt }, entry.message);
  }

  return { onEvent, log };
}
