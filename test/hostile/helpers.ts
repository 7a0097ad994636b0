import { spawn, type ChildProcess } from 'node:child_process';
import type { ToolContext } from '../../src/index.js';

// Shared by the hostile-input suite: a handler context, the code or message a call fails with,
// and an attacker's process that swaps a folder for a symbolic link.

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

// A separate process, as an attacker would be: `ROOT/real` is a folder, then a link to `outside`,
// then a folder again, for as long as it runs (kill it after).
const SWAPPER = `
const fs = require('node:fs');
const [root, outside] = process.argv.slice(1);
const real = root + '/real', parked = root + '/parked';
for (;;) {
  // Each step on its own, so that one failing never leaves the tree without 'real' for good.
  try { fs.renameSync(real, parked); } catch {}
  try { fs.symlinkSync(outside, real); } catch {}
  try { if (fs.lstatSync(real).isSymbolicLink()) fs.unlinkSync(real); } catch {}
  try { fs.renameSync(parked, real); } catch {}
}
`;

export function startSwapper(root: string, outside: string): ChildProcess {
  return spawn(process.execPath, ['-e', SWAPPER, root, outside], { stdio: 'ignore' });
}
