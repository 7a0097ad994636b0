import { join } from 'node:path';
import { createEngine, type Engine } from '../../src/engine/engine.js';

// An engine over test/fixtures/serve/chains with the tools those chains call, registered from
// code: noop, echo, sleep (honours its signal), fail_times (fails the first N attempts of a run),
// boom (always throws code BOOM), wipe (dangerous).

export const SERVE_CHAINS = join(import.meta.dirname, '..', 'fixtures', 'serve', 'chains');

export async function serveEngine(options: Parameters<typeof createEngine>[0] = {}): Promise<Engine> {
  const engine = await createEngine({ chainsDir: SERVE_CHAINS, ...options });
  engine.registerTool({ name: 'noop', handler: () => ({}) });
  engine.registerTool({ name: 'echo', handler: (args, ctx) => (ctx.log('echoing', { value: args.value }), { value: args.value ?? null }) });
  engine.registerTool({
    name: 'sleep',
    parameters: { type: 'object', properties: { ms: { type: 'integer' } } },
    handler: (args, ctx) =>
      new Promise((resolve, reject) => {
        const ms = Number(args.ms ?? 100);
        const timer = setTimeout(() => resolve({ slept: ms }), ms);
        ctx.signal.addEventListener('abort', () => (clearTimeout(timer), reject(ctx.signal.reason)), { once: true });
      }),
  });
  const failures = new Map<string, number>();
  engine.registerTool({
    name: 'fail_times',
    handler: (args, ctx) => {
      const seen = failures.get(ctx.run_id) ?? 0;
      failures.set(ctx.run_id, seen + 1);
      if (seen < Number(args.times ?? 1)) throw Object.assign(new Error(`failure ${seen + 1} of ${String(args.times)}`), { code: 'FLAKY' });
      return { ok: true, attempt: ctx.attempt };
    },
  });
  engine.registerTool({
    name: 'boom',
    handler: () => {
      throw Object.assign(new Error('the tool exploded'), { code: 'BOOM' });
    },
  });
  engine.registerTool({ name: 'wipe', dangerous: true, handler: () => ({ wiped: true }) });
  return engine;
}
