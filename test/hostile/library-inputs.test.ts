import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';

// `engine.run` resolves with a result for anything a caller passes; it never
// rejects with a raw TypeError for an input it cannot read or a chain name that is not a string.

describe('engine.run with hostile arguments', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ cache: 'off' });
    engine.registerTool({ name: 'id', handler: (args) => args });
    engine.addChain('name: flat\ninputs: { a: string }\nsteps:\n  - name: s\n    tool: id\n    input_map: { a: $.a }\n');
    engine.addChain('name: deep\ninputs: { o: object }\nsteps:\n  - name: s\n    tool: id\n    input_map: { o: $.o }\n');
  });
  afterAll(() => engine.close());

  const throwing = (): Record<string, unknown> =>
    Object.defineProperty({}, 'a', {
      enumerable: true,
      get() {
        throw new Error('getter says no');
      },
    });
  const revoked = (): object => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  };
  const refusing = (): object =>
    new Proxy(
      { a: 'x' },
      {
        ownKeys() {
          throw new Error('ownKeys says no');
        },
      },
    );

  it('an input with a throwing getter resolves INPUT_INVALID, with the reason', async () => {
    const result = await engine.run('flat', throwing());
    expect(result).toMatchObject({ status: 'failed', outputs: null, error: { code: 'INPUT_INVALID' } });
    expect(result.error?.message).toContain('getter says no');
  });

  it('a nested throwing getter, a revoked Proxy and a Proxy whose traps throw resolve INPUT_INVALID', async () => {
    for (const [chain, input] of [['deep', { o: throwing() }], ['flat', revoked()], ['flat', refusing()], ['deep', { o: refusing() }]] as const) {
      const result = await engine.run(chain, input);
      expect(result.error?.code).toBe('INPUT_INVALID');
    }
  });

  it('the same with a run id (the input is then recorded as JSON first)', async () => {
    const result = await engine.run('flat', throwing(), { runId: 'hostile-getter' });
    expect(result.error?.code).toBe('INPUT_INVALID');
  });

  it('a Proxy that reads fine is just an input', async () => {
    const result = await engine.run('flat', new Proxy({ a: 'x' }, {}));
    expect(result).toMatchObject({ status: 'succeeded', outputs: { a: 'x' } });
  });

  it('a chain name that is not a string resolves CHAIN_NOT_FOUND saying what was given', async () => {
    for (const [name, kind] of [[42, 'a number'], [null, 'null'], [{ toString: () => 'flat' }, 'an object'], [undefined, 'nothing']] as const) {
      const result = await engine.run(name as unknown as string);
      expect(result).toMatchObject({ status: 'failed', chain: '', error: { code: 'CHAIN_NOT_FOUND', message: `the chain to run must be named by a string, got ${kind}` } });
    }
  });
});
