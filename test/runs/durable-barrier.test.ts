import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import type { Durability } from '../../src/store/types.js';
import { POSTGRES_URL } from '../helpers/services.js';

// A step starts only when every result it reads is recorded: the step that reads asks the store
// itself, from inside its handler, which results it holds. With `durability: none` the results are
// written behind the steps, and the reader starts before the write.

const root = mkdtempSync(join(tmpdir(), 'toolchain-barrier-'));
const schema = `barrier_${process.pid}`;
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  for (const level of ['normal', 'full']) await client.query(`DROP SCHEMA IF EXISTS ${schema}_${level} CASCADE`);
  await client.end();
});

const CHAIN = `version: "1"
name: reads
steps:
  - { name: a, tool: value }
  - { name: fan, tool: value, for_each: "$.a.list" }
  - { name: p1, tool: value, parallel: true, depends_on: [a] }
  - { name: p2, tool: value, parallel: true, depends_on: [a] }
  - { name: sub, chain: inner, depends_on: [p1, p2] }
  - { name: reader, tool: look, input_map: { fan: $.fan, sub: $.sub } }
outputs: { seen: $.reader.seen }
`;

const INNER = `version: "1"
name: inner
steps:
  - { name: x, tool: value }
  - { name: y, tool: look }
outputs: { seen: $.y.seen }
`;

async function seenBy(store: string, durability: Durability): Promise<{ reader: string[]; inner: string[] }> {
  const engine = await createEngine({ cache: 'off', store, durability });
  try {
    engine.registerTool({ name: 'value', parameters: { type: 'object' }, handler: () => ({ list: [1, 2, 3] }) });
    engine.registerTool({
      name: 'look',
      parameters: { type: 'object' },
      // What the store holds for this run now, read by the step as it starts.
      handler: async (_args, ctx) => ({ seen: Object.keys((await engine.runs.get(ctx.idempotencyKey.split(':')[0]!))?.steps ?? {}).sort() }),
    });
    engine.addChain(INNER);
    engine.addChain(CHAIN);
    const result = await engine.run('reads', {});
    expect(result.status, JSON.stringify(result.error)).toBe('succeeded');
    const detail = await engine.runs.get(result.run_id);
    const inner = (detail?.steps['sub›y']?.output as { seen: string[] } | undefined)?.seen ?? [];
    return { reader: (result.outputs as { seen: string[] }).seen, inner };
  } finally {
    await engine.close();
  }
}

const stores: [string, (name: string) => string][] = [
  ['SQLite', (name) => `sqlite:${join(root, `${name}.db`)}`],
  ['PostgreSQL', (name) => `${POSTGRES_URL}?schema=${schema}_${name}`],
];

describe('a step reads only what is recorded', () => {
  for (const [name, url] of stores) {
    it(`${name}: every result a step reads is in the store when it starts (for_each elements, parallel steps, a sub-chain's steps)`, async () => {
      for (const durability of ['normal', 'full'] as const) {
        const { reader, inner } = await seenBy(url(durability), durability);
        expect(reader).toEqual(expect.arrayContaining(['a', 'fan', 'fan[0]', 'fan[1]', 'fan[2]', 'p1', 'p2', 'sub', 'sub›x', 'sub›y']));
        expect(inner).toEqual(expect.arrayContaining(['a', 'p1', 'p2', 'sub›x']));
      }
    });

  }

  it('SQLite: with durability none a step starts before what it reads is written', async () => {
    // The store answers at once (no round trip during which the results would be written).
    const { inner } = await seenBy(`sqlite:${join(root, 'none.db')}`, 'none');
    expect(inner).not.toContain('sub›x');
  });
});
