import { approvedBy } from '../call/index.js';
import { didYouMean, suggestionSuffix, ToolchainError } from '../common/errors.js';
import { printable, printableJson } from '../common/printable.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { RunOptions } from '../executor/index.js';
import type { LogEntry, RunEvent } from '../run-model/events.js';
import type { RunResult } from '../run-model/result.js';
import type { IsolationLevel } from '../plugins/index.js';
import type { ToolSet } from '../registry/types.js';
import { askApproval } from './approval-prompt.js';
import { EXIT_OK, exitCodeFor, type CliIO } from './io.js';
import { guardProcess } from './process-guard.js';
import { createLiveProgress, type LiveProgress } from './progress/live-progress.js';
import { parseQueueUrl } from '../queue/connection.js';
import { queueWaitNotice } from './queue-wait-notice.js';
import { isolationFlag } from './shared-options.js';
import { reportStalls } from './stall-report.js';

// What `run` and `resume` share: Ctrl-C cancels the run, dangerous tools are approved by
// `--approve` or a prompt (the progress block steps aside for it), progress is drawn on a
// terminal, tools' ctx.log lines are shown with --verbose, plugin code in this thread may neither
// end nor crash the process (process-guard.ts), a tool that never settles ends the run
// TOOL_STALLED instead of a silent exit 13 (stall-report.ts), and the result is printed — the
// outputs as JSON (the whole result with --json), errors as one line — with the CLI's exit code.

export interface SessionFlags {
  readonly json: boolean;
  readonly approve: readonly string[];
  /** Without a terminal: a dangerous call becomes an approval request (decided with `toolchain approvals`) and the run waits for it. */
  readonly waitApprovals?: boolean;
  readonly verbose?: boolean;
  readonly isolation: string;
}

export interface Session {
  /** The engine's `logger` with --verbose: ctx.log lines above the progress block. */
  readonly logger: ((entry: LogEntry) => void) | undefined;
  /** --isolation, checked. */
  readonly isolation: IsolationLevel;
  /**
   * Runs `start` (the engine's run or resume) with the session's options; the exit code. The
   * engine's chains name stalled steps' tools; its tools check --approve. With `queue` (--queue),
   * a run no worker has taken after a few seconds is said to wait for one.
   */
  run(start: (options: RunOptions) => Promise<RunResult>, engine: SessionEngine, queue?: string): Promise<number>;
  /** Gives the process back its own exit and error handlers. */
  close(): void;
}

/** What a session reads of the engine. */
export interface SessionEngine {
  chain(name: string): ChainPlan | undefined;
  tools(): ToolSet;
}

export function openSession(io: CliIO, flags: SessionFlags, globals: { readonly plugins: string; readonly debug: boolean }): Session {
  const isolation = isolationFlag(flags.isolation);
  // Set once loaded (before the run starts); until then ctx.log lines go straight to stderr.
  let progress: LiveProgress | undefined;
  const loading = io.stderr.isTTY ? createLiveProgress(io.stderr as NodeJS.WriteStream) : undefined;
  // A failure to load surfaces from run(); a session closed without a run must not leave it unhandled.
  loading?.catch(() => undefined);
  const unguard = guardProcess({ pluginsDir: globals.plugins, report: (line) => void io.stderr.write(`${printable(`warning: ${line}`)}\n`) });
  return {
    logger: flags.verbose ? (entry) => showLog(io, progress, entry) : undefined,
    isolation,
    async run(start, engine, queue) {
      const live = (progress = await loading);
      const waiting = queue === undefined ? undefined : queueWaitNotice(parseQueueUrl(queue).display, (line) => (live ? live.log(line) : void io.stderr.write(`${line}\n`)));
      checkApprovals(flags.approve, engine.tools());
      const approved = approvedBy(flags.approve);
      const interactive = io.stdin.isTTY === true && io.stderr.isTTY === true;
      const say = (line: string): void => (live ? live.log(printable(line)) : void io.stderr.write(`${printable(line)}\n`));
      const abort = new AbortController();
      const onInterrupt = (): void => abort.abort();
      process.once('SIGINT', onInterrupt);
      const stalls = reportStalls((name) => engine.chain(name), (reason) => abort.abort(reason));
      let result: RunResult | undefined;
      try {
        result = await start({
          signal: abort.signal,
          debug: globals.debug,
          approve: (req) => {
            if (approved(req)) return true;
            if (interactive) return live ? live.pause(() => askApproval(io, req)) : askApproval(io, req);
            return flags.waitApprovals === true ? 'wait' : false;
          },
          onEvent: (e: RunEvent): void => {
            if (e.type === 'approval:requested') say(`approval ${e.id}: ${e.tool !== undefined ? `step '${e.step}' wants to call dangerous tool '${e.tool}'` : e.prompt}; decide with 'toolchain approvals approve ${e.id}' (or deny)`);
            else if (e.type === 'run:waiting' && e.parent === undefined) say(`run ${e.run_id} waits for ${e.waits.map((w) => (w.kind === 'event' ? `event '${w.name}'` : w.kind === 'approval' ? `approval ${w.id}` : `a sleep until ${new Date(w.until ?? 0).toISOString()}`)).join(', ')}; this process waits with it (Ctrl-C cancels the run)`);
            waiting?.onEvent(e);
            stalls.onEvent(e);
            live?.onEvent(e);
          },
          ...(live ? { onProgress: live.onProgress } : {}),
        });
      } finally {
        waiting?.stop();
        process.removeListener('SIGINT', onInterrupt);
        stalls.release();
        live?.done(result);
      }
      return printResult(io, result, flags.json, globals.debug);
    },
    close: unguard,
  };
}

/** With `debug`, a handler's stack follows the error line (it is in `--json`'s `error.stack` too). */
export function printResult(io: CliIO, result: RunResult, json: boolean, debug = false): number {
  if (json) io.stdout.write(`${printableJson(result, 2)}\n`);
  else if (result.status === 'succeeded') io.stdout.write(`${printableJson(result.outputs ?? null, 2)}\n`);
  const handling = handlerFailures(result);
  if (result.status === 'succeeded') {
    for (const line of handling) io.stderr.write(`${printable(line)}\n`);
    return EXIT_OK;
  }
  const error = result.error!;
  const step = error.step !== undefined && !error.message.includes(`step '${error.step}'`) ? ` (step '${error.step}')` : '';
  io.stderr.write(`${printable(`error: ${error.code} ${error.message}${step}`)}\n`);
  for (const line of handling) io.stderr.write(`${printable(line)}\n`);
  const tool = error.code === 'APPROVAL_DENIED' ? /dangerous tool '([^']+)'/.exec(error.message)?.[1] : undefined;
  if (tool !== undefined) io.stderr.write(`${printable(`hint: allow it with --approve ${tool}, answer y when asked on a terminal, or pass --wait-approvals and decide with 'toolchain approvals'`)}\n`);
  if (debug && error.stack !== undefined) io.stderr.write(`${error.stack.split('\n').map(printable).join('\n')}\n`);
  return exitCodeFor(error.code);
}

/**
 * The failure handling that failed, one line each: a compensation that failed for good (what its
 * step did may not be undone), an on_failure or finally step (the run's status is its own).
 */
function handlerFailures(result: RunResult): string[] {
  const out: string[] = [];
  for (const [key, s] of Object.entries(result.steps)) {
    if (s.phase === undefined || s.status !== 'failed') continue;
    const why = s.error ? `: ${s.error.code} ${s.error.message}` : '';
    out.push(s.phase === 'compensate' ? `compensation failed: '${key}'${why}` : `warning: ${s.phase} step '${key}' failed${why}`);
  }
  return out;
}

/** A tool's `ctx.log` line with --verbose: `[step] message {fields}` (`[step[3]]` for a for_each element), above the progress block. */
function showLog(io: CliIO, progress: LiveProgress | undefined, entry: LogEntry): void {
  const fields = entry.fields && Object.keys(entry.fields).length ? ` ${JSON.stringify(entry.fields)}` : '';
  const line = printable(`[${entry.step}${entry.item !== undefined ? `[${entry.item}]` : ''}${entry.attempt > 1 ? ` attempt ${entry.attempt}` : ''}] ${entry.message}${fields}`);
  if (progress) progress.log(line);
  else io.stderr.write(`${line}\n`);
}

/** Every --approve names an installed tool: a typo would otherwise leave the tool refused, silently. */
function checkApprovals(names: readonly string[], tools: ToolSet): void {
  for (const name of names) {
    if (tools.get(name) !== undefined) continue;
    const all = tools.tools().flatMap((t) => [t.name, t.qualifiedName]);
    throw new ToolchainError('USAGE', `--approve ${name}: no such tool is installed${suggestionSuffix(didYouMean(name, all))}`);
  }
}
