import type { Command } from 'commander';
import { openStore } from '../store/open-store.js';
import type { RunStore } from '../store/types.js';
import type { CommandContext } from './main.js';
import { storeUrl } from './store-url.js';

// The commands that read and write the run store alone (runs, emit, approvals): each takes
// --store (default TOOLCHAIN_STORE, else the project's SQLite file) and loads no plugin.

export interface StoreFlag {
  readonly store?: string;
}

export function withStoreOption<T extends Command>(command: T): T {
  return command.option('--store <url>', 'the run store (default: TOOLCHAIN_STORE, else sqlite:.toolchain/runs.db)') as T;
}

/** Opens the store, does `work`, closes the store, and exits with `work`'s code. */
export async function withOpenStore(ctx: CommandContext, flags: StoreFlag, work: (store: RunStore) => Promise<number>): Promise<void> {
  const store = await openStore(storeUrl(flags.store, ctx.io));
  try {
    ctx.exit(await work(store));
  } finally {
    await store.close();
  }
}
