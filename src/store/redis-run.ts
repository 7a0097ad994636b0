import type { RunError } from '../run-model/result.js';
import type { StoredRun } from './types.js';
import { storedJson, storedStatus } from './run-codec.js';

// A run as the Redis store keeps it: one hash of fields (JSON values as text, times as decimal
// text, the cancel flag as '0'/'1'); a field that is absent is null.

/** A flat HGETALL answer (`field, value, …`, from `from` on) as a run; undefined when empty. */
export function runFromFields(fields: readonly string[], from = 0): StoredRun | undefined {
  if (fields.length <= from) return undefined;
  const h = new Map<string, string>();
  for (let i = from; i + 1 < fields.length; i += 2) h.set(fields[i]!, fields[i + 1]!);
  return runFromHash(h);
}

export function runFromHash(h: ReadonlyMap<string, string>): StoredRun | undefined {
  const id = h.get('id');
  if (id === undefined) return undefined;
  const num = (field: string): number | null => (h.has(field) ? Number(h.get(field)) : null);
  const json = (field: string): unknown => (h.has(field) ? storedJson(id, field, h.get(field)!) : null);
  return {
    id,
    chain: h.get('chain') ?? '',
    chain_hash: h.get('chain_hash') ?? '',
    input: h.has('input') ? storedJson(id, 'input', h.get('input')!) : undefined,
    status: storedStatus(id, h.get('status')),
    created_at: num('created_at') ?? 0,
    updated_at: num('updated_at') ?? 0,
    finished_at: num('finished_at'),
    outputs: json('outputs'),
    error: json('error') as RunError | null,
    owner: h.get('owner') ?? null,
    lease_until: num('lease_until'),
    epoch: num('epoch') ?? 0,
    cancel_requested: h.get('cancel_requested') === '1',
    queue: h.get('queue') ?? null,
    rerun_of: h.get('rerun_of') ?? null,
    rerun_from: h.get('rerun_from') ?? null,
  };
}
