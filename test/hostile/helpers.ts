import type { ToolContext } from '../../src/index.js';

// Shared by the hostile-input suite: a handler context and the code or message a call fails with.

export function context(env: Record<string, string | undefined> = {}, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, attempt: 1, run_id: 'hostile-run', step: 'hostile-step', log: () => undefined, env, idempotencyKey: 'hostile-run:hostile-step' };
}

export async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { code: String((error as { code?: unknown }).code), message: (error as Error).message };
  }
  throw new Error('expected the call to fail');
}
