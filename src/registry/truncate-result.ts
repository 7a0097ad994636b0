// `truncate: true`: a result over the size limit is cut to fit and wrapped so nobody mistakes it
// for the whole thing:
//
//   { "truncated": true, "original_bytes": 2351200, "value": <the cut value> }
//
// The cut value keeps the original's type: a string keeps its beginning, an array its leading
// items, an object its leading members (in their order), the last kept one cut in turn. Chains
// can test `$.step.truncated` and read `$.step.value`.

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
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    let used = 2;
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined) continue;
      const keyBytes = bytesOf(key) + 1 + (used > 2 ? 1 : 0);
      const size = keyBytes + bytesOf(member);
      if (used + size <= budget) {
        Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
        used += size;
        continue;
      }
      const rest = budget - used - keyBytes;
      if (rest >= MIN_PARTIAL && canCut(member)) {
        Object.defineProperty(out, key, { value: cut(member, rest), enumerable: true, writable: true, configurable: true });
      }
      break;
    }
    return out;
  }
  return bytesOf(value) <= budget ? value : null;
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
