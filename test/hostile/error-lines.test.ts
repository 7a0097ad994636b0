import { describe, expect, it } from 'vitest';
import { createEngine, createRegistry } from '../../src/index.js';

// A RESULT_INVALID message was spread over two lines (errors are one line each). That every
// code is explained, each under its own heading, is test/docs/generated.test.ts's to check.

describe('errors are one line', () => {
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
});
