import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { openOnFirstUse } from '../store/lazy-store.js';
import { openStore } from '../store/open-store.js';
import type { RunStore } from '../store/types.js';

// The run store of a long-lived command that may never need one (`toolchain mcp`: only calls that
// wait for a person are recorded). An SQLite store whose folder does not exist is not created
// until something is written — an MCP client may start the server in any folder — and until then
// every look for runs (the waker's, every second) answers that there are none, which is true of
// a store that does not exist; once the folder exists (made here or by another process), the
// store is opened and read. Any other store is the store URL itself, opened by the engine.

export function storeWhenNeeded(url: string, cwd: string): string | RunStore {
  if (!url.startsWith('sqlite:')) return url;
  const folder = dirname(resolve(cwd, url.slice('sqlite:'.length)));
  if (existsSync(folder)) return url;
  let opened = false;
  const lazy = openOnFirstUse(url, () => ((opened = true), openStore(url)));
  const there = (): boolean => opened || existsSync(folder);
  return {
    ...lazy,
    getRun: async (id) => (there() ? lazy.getRun(id) : undefined),
    getSteps: async (id) => (there() ? lazy.getSteps(id) : []),
    listRuns: async (filter) => (there() ? lazy.listRuns(filter) : []),
    waits: {
      ...lazy.waits,
      listWaits: async (filter) => (there() ? lazy.waits.listWaits(filter) : []),
      dueRuns: async (now, limit) => (there() ? lazy.waits.dueRuns(now, limit) : []),
      wakeAt: async (runId) => (there() ? lazy.waits.wakeAt(runId) : undefined),
    },
    triggers: { ...lazy.triggers, list: async () => (there() ? lazy.triggers.list() : []) },
  };
}
