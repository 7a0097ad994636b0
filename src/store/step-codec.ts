import { createHash } from 'node:crypto';
import type { StoredStep } from './types.js';

// How the durable drivers keep a step result: one JSON text per step. An output whose JSON is
// bigger than BLOB_THRESHOLD is kept once, apart, as a blob named by the sha256 of its JSON (two
// steps with the same big output share it), and the step's text carries `"$blob": HASH` in its
// place. Reads put the output back, so callers never see the difference.

export const BLOB_THRESHOLD = 256 * 1024;

/** The field that stands for a big output in a step's text (StepRecord has no field of that name). */
const BLOB_FIELD = '$blob';

export interface EncodedStep {
  readonly key: string;
  /** Kept beside the text: a `succeeded` result is final, any other may be replaced. */
  readonly status: StoredStep['status'];
  readonly json: string;
  /** Set when the output went to a blob. */
  readonly blob: { readonly hash: string; readonly json: string } | undefined;
}

export function encodeStep(step: StoredStep): EncodedStep {
  // Most records are small: encoded once as they are (a record of at most a third of the
  // threshold in UTF-16 units cannot hold an output of more than the threshold in bytes).
  const whole = JSON.stringify(step);
  if (step.output === undefined || whole.length * 3 <= BLOB_THRESHOLD) return { key: step.key, status: step.status, json: whole, blob: undefined };
  const { output, ...rest } = step;
  const out = JSON.stringify(output);
  // The record without its output is a non-empty object: the output is spliced in before its `}`.
  const head = JSON.stringify(rest).slice(0, -1);
  if (!isBig(out)) return { key: step.key, status: step.status, json: `${head},"output":${out}}`, blob: undefined };
  const hash = createHash('sha256').update(out).digest('hex');
  return { key: step.key, status: step.status, json: `${head},"${BLOB_FIELD}":"${hash}"}`, blob: { hash, json: out } };
}

/**
 * Results of one call with the same `identity` (run, epoch and key) folded into the one the store
 * would keep in the end — the first success, else the last result — at the place of the first: a
 * statement may change a row only once (PostgreSQL's ON CONFLICT DO UPDATE).
 */
export function foldSteps<T extends { readonly step: EncodedStep }>(entries: readonly T[], identity: (entry: T) => string): T[] {
  const kept = new Map<string, T>();
  for (const entry of entries) {
    const id = identity(entry);
    const before = kept.get(id);
    if (before === undefined || before.step.status !== 'succeeded') kept.set(id, entry);
  }
  return [...kept.values()];
}

function isBig(json: string): boolean {
  // A UTF-16 length is at most the UTF-8 byte length, and at least a third of it.
  if (json.length > BLOB_THRESHOLD) return true;
  return json.length * 3 > BLOB_THRESHOLD && Buffer.byteLength(json, 'utf8') > BLOB_THRESHOLD;
}

/** Stored step texts, parsed, with the blobs they refer to (fetched next, then given to withBlobs). */
export interface ParsedSteps {
  readonly steps: readonly Record<string, unknown>[];
  readonly blobs: readonly string[];
}

export function parseSteps(texts: readonly string[]): ParsedSteps {
  const steps = texts.map((t) => JSON.parse(t) as Record<string, unknown>);
  const blobs = new Set<string>();
  for (const step of steps) {
    const hash = step[BLOB_FIELD];
    if (typeof hash === 'string') blobs.add(hash);
  }
  return { steps, blobs: [...blobs] };
}

/** The records, their big outputs put back from `found` (blob texts by hash). A missing blob is a damaged store. */
export function withBlobs(parsed: ParsedSteps, found: ReadonlyMap<string, string>): StoredStep[] {
  for (const step of parsed.steps) {
    const hash = step[BLOB_FIELD];
    if (typeof hash !== 'string') continue;
    const json = found.get(hash);
    if (json === undefined) throw new MissingBlobError(hash, String(step['key']));
    delete step[BLOB_FIELD];
    step['output'] = JSON.parse(json);
  }
  return parsed.steps as unknown as StoredStep[];
}

export class MissingBlobError extends Error {
  constructor(hash: string, key: string) {
    super(`the output of step '${key}' refers to blob ${hash}, which is missing`);
    this.name = 'MissingBlobError';
  }
}
