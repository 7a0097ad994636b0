import { relative } from 'node:path';
import type { ErrorCode } from '../../common/errors.js';
import { raceTimeout } from '../../common/race.js';
import type { ToolHandler } from '../../registry/types.js';
import { resolveHandler } from '../resolve-handler.js';
import type { WorkerKind } from './channel.js';
import { workerEntry } from './entry-file.js';
import type { IsolationSettings } from './level.js';
import type { HandlerRef } from './protocol.js';
import { WorkerPool } from './worker-pool.js';

// An isolated plugin's handlers: each located in the plugin folder as usual (escapes refused),
// then served by a pool of workers instead of being imported here. Eagerly, one worker imports
// them all at load, so that a broken module is reported then and the last good version kept.

export type IsolatedOutcome = { readonly ok: true; readonly handler: ToolHandler } | { readonly ok: false; readonly code: ErrorCode; readonly message: string };

export interface IsolatedLoad {
  /** One per tool, in manifest order. */
  readonly outcomes: readonly IsolatedOutcome[];
  /** Ends the workers once they are idle (this version was replaced, or the engine closes). */
  readonly retire: () => void;
}

export interface IsolateOptions {
  readonly plugin: string;
  readonly realDir: string;
  readonly kind: WorkerKind;
  readonly settings: IsolationSettings;
  readonly mode: 'eager' | 'lazy';
  readonly tools: readonly { readonly name: string; readonly handler?: string }[];
  readonly importTimeoutMs: number;
  readonly cacheDir?: string;
  /** The workers' environment: see worker-env.ts. */
  readonly env: Readonly<Record<string, string>>;
  readonly log: (message: string, fields: Record<string, unknown>) => void;
}

export async function isolateHandlers(o: IsolateOptions): Promise<IsolatedLoad> {
  const located = await Promise.all(o.tools.map((t) => resolveHandler(o.realDir, t.name, t.handler)));
  let entry: string;
  try {
    entry = workerEntry();
  } catch (error) {
    const message = (error as Error).message;
    return { outcomes: located.map(() => ({ ok: false, code: 'HANDLER_LOAD', message })), retire: () => undefined };
  }
  const pool = new WorkerPool({ kind: o.kind, plugin: o.plugin, dir: o.realDir, entry, memoryMb: o.settings.memoryMb, workers: o.settings.workers, graceMs: o.settings.graceMs, env: o.env, log: o.log, ...(o.cacheDir !== undefined ? { cacheDir: o.cacheDir } : {}) });
  const refs = new Map<number, HandlerRef>();
  located.forEach((l, i) => {
    if (l.ok) refs.set(i, { tool: o.tools[i]!.name, file: l.file, ...(l.exportName !== undefined ? { exportName: l.exportName } : {}) });
  });

  const problems = new Map<string, string>();
  if (o.mode === 'eager' && refs.size > 0) {
    const seconds = o.importTimeoutMs / 1000;
    const found = await raceTimeout(pool.preload([...refs.values()]), o.importTimeoutMs, () => new Error(`did not finish loading within ${seconds}s`)).catch(
      (error: unknown) => [{ tool: '*', message: (error as Error).message }],
    );
    for (const p of found) problems.set(p.tool, p.message);
  }

  const outcomes = o.tools.map((tool, i): IsolatedOutcome => {
    const l = located[i]!;
    if (!l.ok) return l;
    const ref = refs.get(i)!;
    const problem = problems.get(tool.name) ?? problems.get('*');
    if (problem !== undefined) return { ok: false, code: 'HANDLER_LOAD', message: `tool '${tool.name}': ${relative(o.realDir, ref.file)}: ${problem}` };
    return { ok: true, handler: pool.handler(ref) };
  });
  if (outcomes.some((x) => !x.ok)) pool.retire();
  return { outcomes, retire: () => pool.retire() };
}
