import { Worker } from 'node:worker_threads';
import { type ToolContext, toolError } from '../lib/tool-context.js';

// regex_extract: every match of a JavaScript regular expression, with numbered and named groups.
// A regular expression can backtrack for longer than the universe lasts on a short input
// ("(a+)+$" against 40 a's), and JavaScript cannot interrupt a running match. So the matching
// runs in a worker thread that is terminated at `time_limit_ms` (REGEX_TIMEOUT) or when the
// step's signal fires; the pattern, the input and the number of matches are capped as well
// (PATTERN_TOO_LONG, TEXT_TOO_LONG, max_matches). The pattern is only ever handed to `new RegExp`.

interface Args {
  readonly text: string;
  readonly pattern: string;
  readonly flags?: string;
  readonly max_matches?: number;
  readonly time_limit_ms?: number;
}

export interface RegexMatch {
  /** The whole match. */
  readonly match: string;
  /** Offset of the match in the text (UTF-16 code units, as JavaScript counts). */
  readonly index: number;
  /** Numbered groups, $1 first; null for a group that did not take part. */
  readonly captures: readonly (string | null)[];
  /** Named groups; null for one that did not take part. Empty without named groups. */
  readonly groups: Readonly<Record<string, string | null>>;
}

export interface RegexResult {
  readonly matches: readonly RegexMatch[];
  readonly count: number;
  /** True when there were more than max_matches matches. */
  readonly truncated: boolean;
}

export const LIMITS = Object.freeze({ patternLength: 1000, textLength: 1_000_000, maxMatches: 10_000, timeLimitMs: 10_000 });
const FLAGS = /^[dimsuvy]*$/;

// Runs inside the worker: only this fixed source is evaluated there; pattern and text are data.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { text, pattern, flags, max } = workerData;
const re = new RegExp(pattern, flags);
const matches = [];
let truncated = false;
for (const m of text.matchAll(re)) {
  if (matches.length === max) { truncated = true; break; }
  const groups = {};
  if (m.groups) for (const k of Object.keys(m.groups)) groups[k] = m.groups[k] === undefined ? null : m.groups[k];
  matches.push({ match: m[0], index: m.index, captures: m.slice(1).map((c) => c === undefined ? null : c), groups });
}
parentPort.postMessage({ matches, truncated });
`;

export default async function regexExtract(args: Args, ctx?: ToolContext): Promise<RegexResult> {
  const { text, pattern, flags = '', max_matches = 100, time_limit_ms = 1000 } = args;
  if (typeof pattern !== 'string' || pattern === '') throw toolError('BAD_PATTERN', 'the pattern must be a non-empty string');
  if (pattern.length > LIMITS.patternLength) {
    throw toolError('PATTERN_TOO_LONG', `the pattern has ${pattern.length} characters; at most ${LIMITS.patternLength} are allowed`);
  }
  if (typeof text !== 'string') throw toolError('BAD_ARGUMENT', 'text must be a string');
  if (text.length > LIMITS.textLength) {
    throw toolError('TEXT_TOO_LONG', `the text has ${text.length} characters; at most ${LIMITS.textLength} are searched`);
  }
  if (!FLAGS.test(flags) || new Set(flags).size !== flags.length) {
    throw toolError('BAD_PATTERN', `flags "${flags}" are not valid: use any of d, i, m, s, u, v, y once each (g is implied)`);
  }
  const max = Math.min(Math.max(1, Math.floor(max_matches)), LIMITS.maxMatches);
  const limitMs = Math.min(Math.max(1, time_limit_ms), LIMITS.timeLimitMs);
  try {
    new RegExp(pattern, `${flags}g`);
  } catch (error) {
    throw toolError('BAD_PATTERN', `the pattern is not a valid regular expression: ${(error as Error).message}`);
  }
  const result = await runInWorker({ text, pattern, flags: `${flags}g`, max }, limitMs, ctx?.signal);
  return { matches: result.matches, count: result.matches.length, truncated: result.truncated };
}

interface WorkerAnswer {
  readonly matches: RegexMatch[];
  readonly truncated: boolean;
}

function runInWorker(data: { text: string; pattern: string; flags: string; max: number }, limitMs: number, signal?: AbortSignal): Promise<WorkerAnswer> {
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: data, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(() => {
      finish(() => reject(toolError('REGEX_TIMEOUT', `the pattern ran for more than ${limitMs} ms and was stopped; it probably backtracks catastrophically (nested quantifiers such as (a+)+)`)));
    }, limitMs);
    const onAbort = (): void => finish(() => reject(signal?.reason ?? toolError('ABORTED', 'cancelled')));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (answer: WorkerAnswer) => finish(() => resolve(answer)));
    worker.once('error', (error) => finish(() => reject(toolError('REGEX_FAILED', `matching failed: ${error.message}`))));
    worker.once('exit', (code) => finish(() => reject(toolError('REGEX_FAILED', `the matcher stopped unexpectedly (exit code ${code})`))));
  });
}
