import { isAbsolute, resolve } from 'node:path';
import type { CliIO } from './io.js';

/** The CLI records runs here unless told otherwise. */
export const DEFAULT_STORE = 'sqlite:.toolchain/runs.db';

/** `--store`, else TOOLCHAIN_STORE, else the default; a relative SQLite file is relative to the working directory. */
export function storeUrl(flag: string | undefined, io: CliIO): string {
  const url = flag ?? io.env.TOOLCHAIN_STORE ?? DEFAULT_STORE;
  if (!url.startsWith('sqlite:')) return url;
  const file = url.slice('sqlite:'.length);
  return file === '' || file === ':memory:' || isAbsolute(file) ? url : `sqlite:${resolve(io.cwd, file)}`;
}

/** The store of a command that may hand its runs to `queue`: with a queue and no store named, none (the engine uses the queue's Redis). */
export function runStoreUrl(flag: string | undefined, io: CliIO, queue: string | undefined): string | undefined {
  return queue !== undefined && flag === undefined && io.env.TOOLCHAIN_STORE === undefined ? undefined : storeUrl(flag, io);
}
