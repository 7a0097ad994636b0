import { defineOwn } from '../common/define-own.js';

// `truncate: true`: a result over the size limit is cut to fit and wrapped so nobody mistakes it
// for the whole thing:
//
//   { "truncated": true, "original_bytes": 2351200, "value": <the cut value> }
//
// The cut value keeps the original's type: a string keeps its beginning, an array its leading
// items (the last kept one cut in turn), an object all its members in their order but with the
// largest cut — or, when too little room is left for it, left out — until the rest fits. So a
// command's 1 MiB of stdout is cut while its exit code, stderr and flags stay. Chains can test
// `$.step.truncated` and read `$.step.value`.

export interface TruncatedResult {
  readonly truncated: true;
  readonly original_bytes: number;
  readonly value: unknown;
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? 'null');
/** A remainder too small to hold anything useful is not worth a partial member. */
const MIN_PARTIAL = 16;

function cutString(text: string, budget: number): string {
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (bytesOf(text.slice(0, mid)) <= budget) low = mid;
    else high = mid - 1;
  }
  // Never end on the first half of a surrogate pair.
  const last = text.charCodeAt(low - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, low - 1) : text.slice(0, low);
}

function canCut(value: unknown): boolean {
  return typeof value === 'string' || (typeof value === 'object' && value !== null);
}

function cut(value: unknown, budget: number): unknown {
  if (typeof value === 'string') return cutString(value, budget);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    let used = 2;
    for (const item of value) {
      const size = bytesOf(item) + (out.length > 0 ? 1 : 0);
      if (used + size <= budget) {
        out.push(item);
        used += size;
        continue;
      }
      const rest = budget - used - 1;
      if (rest >= MIN_PARTIAL && canCut(item)) out.push(cut(item, rest));
      break;
    }
    return out;
  }
  if (typeof value === 'object' && value !== null) return cutObject(value as Record<string, unknown>, budget);
  return bytesOf(value) <= budget ? value : null;
}

function cutObject(value: Record<string, unknown>, budget: number): Record<string, unknown> {
  // Each member as it will be written: its value and its size with its key, quotes, colon and comma.
  const members = Object.entries(value)
    .filter(([, member]) => member !== undefined)
    .map(([key, member]) => ({ key, value: member, size: bytesOf(key) + 2 + bytesOf(member) }));
  let total = 1 + members.reduce((sum, m) => sum + m.size, 0);
  while (total > budget && members.length > 0) {
    let largest = 0;
    for (let i = 1; i < members.length; i++) if (members[i]!.size > members[largest]!.size) largest = i;
    const m = members[largest]!;
    const overhead = bytesOf(m.key) + 2;
    const room = budget - (total - m.size) - overhead;
    if (room >= MIN_PARTIAL && canCut(m.value)) {
      m.value = cut(m.value, room);
      const size = overhead + bytesOf(m.value);
      total += size - m.size;
      m.size = size;
      if (total <= budget) break;
    }
    members.splice(largest, 1);
    total -= m.size;
  }
  const out: Record<string, unknown> = {};
  for (const m of members) defineOwn(out, m.key, m.value);
  return out;
}

/** Cut `value` (whose JSON is `originalBytes` long) so that the wrapped result fits in `limit` bytes. */
export function truncateResult(value: unknown, originalBytes: number, limit: number): TruncatedResult {
  const overhead = bytesOf({ truncated: true, original_bytes: originalBytes, value: null }) - 4;
  let budget = limit - overhead;
  for (let tries = 0; ; tries++) {
    const result: TruncatedResult = { truncated: true, original_bytes: originalBytes, value: cut(value, Math.max(0, budget)) };
    const size = bytesOf(result);
    if (size <= limit || tries >= 4 || budget <= 0) return result;
    budget -= size - limit;
  }
}
