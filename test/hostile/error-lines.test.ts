import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_KINDS } from '../../src/common/errors.js';
import { createEngine, createRegistry } from '../../src/index.js';

// Issue 14, item 12: a RESULT_INVALID message was spread over two lines (SPEC §5: one line
// each), and codes appeared in messages that the README's error table did not explain
// (SCHEMA_INVALID among them).

const REPO = join(import.meta.dirname, '..', '..');

describe('errors are one line, and every code is in the README', () => {
  it('RESULT_INVALID with several problems is one line naming each', async () => {
    const engine = await createEngine({ chainsDir: '/nonexistent-chains', pluginsDir: '/nonexistent-plugins', registry: createRegistry() });
    try {
      engine.registerTool({
        name: 'bad_result',
        parameters: { type: 'object' },
        returns: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string' }, b: { type: 'integer' } } },
        handler: async () => ({ a: 1 }),
      });
      engine.addChain('name: r\nsteps:\n  - name: s\n    tool: bad_result\n');
      const result = await engine.run('r', {});
      expect(result.error?.code).toBe('RESULT_INVALID');
      expect(result.error?.message).not.toContain('\n');
      expect(result.error?.message).toMatch(/\(2 problems\): .+; .+/);
    } finally {
      await engine.close();
    }
  });

  it('every error code (ERROR_KINDS) has a row in the README error table', () => {
    const codes = Object.keys(ERROR_KINDS);
    expect(codes.length).toBeGreaterThan(40);
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Errors and how to fix them'), readme.indexOf('## Choices where the specification is silent'));
    const rows = table.split('\n').filter((l) => l.startsWith('| `'));
    const listed = new Set(rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!)));
    expect(codes.filter((c) => !listed.has(c))).toEqual([]);
  });
});
