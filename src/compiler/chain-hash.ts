import { isMap, isScalar, parseDocument } from 'yaml';
import { createHash } from 'node:crypto';

// The chain's content hash (ChainPlan.hash), which a run records and a resume compares
// (CHAIN_CHANGED): sha256 of the file's text with its `triggers:` section cut out. When a chain
// runs is not what it does, so editing, adding or removing a trigger leaves the hash — and every
// earlier run's resumability — as it was; any other edit, a step's included, changes it. A file
// without triggers hashes as its plain text, so the hashes of existing chains do not move.

export function chainHash(text: string, textHash: string, hasTriggers: boolean): string {
  if (!hasTriggers) return textHash;
  const doc = parseDocument(text, { keepSourceTokens: false });
  const contents = doc.contents;
  if (!isMap(contents)) return textHash;
  const pair = contents.items.find((p) => isScalar(p.key) && p.key.value === 'triggers');
  const start = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
  const value = pair?.value as { range?: [number, number, number] } | null | undefined;
  const end = value?.range?.[2] ?? (isScalar(pair?.key) ? pair.key.range?.[2] : undefined);
  if (start === undefined || end === undefined) return textHash;
  return createHash('sha256').update(text.slice(0, start) + text.slice(end)).digest('hex');
}
