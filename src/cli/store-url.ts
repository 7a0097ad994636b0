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
