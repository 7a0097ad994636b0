import { approvedBy } from '../call/index.js';
import { printable } from '../common/printable.js';
import type { LogEntry, RunOptions, RunResult } from '../executor/index.js';
import { askApproval } from './approval-prompt.js';
import { EXIT_OK, exitCodeFor, type CliIO } from './io.js';
import { createLiveProgress, type LiveProgress } from './progress/live-progress.js';

// What `run` and `resume` share: Ctrl-C cancels the run, dangerous tools are approved by
// `--approve` or a prompt (the progress block steps aside for it), progress is drawn on a
// terminal, tools' ctx.log lines are shown with --verbose, and the result is printed — the
// outputs as JSON (the whole result with --json), errors as one line — with SPEC §5's exit code.

export interface SessionFlags {
  readonly json: boolean;
  readonly approve: readonly string[];
  readonly verbose?: boolean;
}

export interface Session {
  /** The engine's `logger` with --verbose: ctx.log lines above the progress block. */
  readonly logger: ((entry: LogEntry) => void) | undefined;
  run(start: (options: RunOptions) => Promise<RunResult>): Promise<number>;
}

export function openSession(io: CliIO, flags: SessionFlags): Session {
  const progress = io.stderr.isTTY ? createLiveProgress(io.stderr as NodeJS.WriteStream) : undefined;
  return {
    logger: flags.verbose ? (entry) => showLog(io, progress, entry) : undefined,
    async run(start) {
      const approved = approvedBy(flags.approve);
      const abort = new AbortController();
      const onInterrupt = (): void => abort.abort();
      process.once('SIGINT', onInterrupt);
      let result: RunResult | undefined;
      try {
        result = await start({
          signal: abort.signal,
          approve: (req) => approved(req) || (progress ? progress.pause(() => askApproval(io, req)) : askApproval(io, req)),
          ...(progress ? { onEvent: progress.onEvent } : {}),
        });
      } finally {
        process.removeListener('SIGINT', onInterrupt);
        progress?.done(result);
      }
      return printResult(io, result, flags.json);
    },
  };
}

export function printResult(io: CliIO, result: RunResult, json: boolean): number {
  if (json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if (result.status === 'succeeded') io.stdout.write(`${JSON.stringify(result.outputs ?? null, null, 2)}\n`);
  if (result.status === 'succeeded') return EXIT_OK;
  const error = result.error!;
  io.stderr.write(`${printable(`error: ${error.code} ${error.message}${error.step !== undefined ? ` (step '${error.step}')` : ''}`)}\n`);
  return exitCodeFor(error.code);
}

/** A tool's `ctx.log` line with --verbose: `[step] message {fields}`, above the progress block. */
function showLog(io: CliIO, progress: LiveProgress | undefined, entry: LogEntry): void {
  const fields = entry.fields && Object.keys(entry.fields).length ? ` ${JSON.stringify(entry.fields)}` : '';
  const line = printable(`[${entry.step}${entry.attempt > 1 ? ` attempt ${entry.attempt}` : ''}] ${entry.message}${fields}`);
  if (progress) progress.log(line);
  else io.stderr.write(`${line}\n`);
}
