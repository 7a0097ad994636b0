import { approvedBy } from '../call/index.js';
import { printable } from '../common/printable.js';
import type { RunOptions, RunResult } from '../executor/index.js';
import { askApproval } from './approval-prompt.js';
import { EXIT_OK, exitCodeFor, type CliIO } from './io.js';
import { createProgress } from './progress.js';

// What `run` and `resume` share: Ctrl-C cancels the run, dangerous tools are approved by
// `--approve` or a prompt, progress is drawn on a terminal, and the result is printed — the
// outputs as JSON (the whole result with --json), errors as one line — with the exit code of
// SPEC §5.

export interface SessionFlags {
  readonly json: boolean;
  readonly approve: readonly string[];
}

export async function runSession(io: CliIO, flags: SessionFlags, start: (options: RunOptions) => Promise<RunResult>): Promise<number> {
  const approved = approvedBy(flags.approve);
  const progress = io.stderr.isTTY ? createProgress(io.stderr) : undefined;
  const abort = new AbortController();
  const onInterrupt = (): void => abort.abort();
  process.once('SIGINT', onInterrupt);
  let result: RunResult;
  try {
    result = await start({
      signal: abort.signal,
      approve: (req) => approved(req) || askApproval(io, req),
      ...(progress ? { onEvent: progress.onEvent } : {}),
    });
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    progress?.done();
  }
  return printResult(io, result, flags.json);
}

export function printResult(io: CliIO, result: RunResult, json: boolean): number {
  if (json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if (result.status === 'succeeded') io.stdout.write(`${JSON.stringify(result.outputs ?? null, null, 2)}\n`);
  if (result.status === 'succeeded') return EXIT_OK;
  const error = result.error!;
  io.stderr.write(`${printable(`error: ${error.code} ${error.message}${error.step !== undefined ? ` (step '${error.step}')` : ''}`)}\n`);
  return exitCodeFor(error.code);
}
