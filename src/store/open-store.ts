import { didYouMean, suggestionSuffix, ToolchainError } from '../common/errors.js';
import { createMemoryStore } from './memory.js';
import { badUrl } from './store-url.js';
import type { Durability, RunStore, StoreOptions } from './types.js';

// A store URL to a store. The drivers are separate modules, imported when their URL is first
// opened, and each imports its database library (better-sqlite3, pg, ioredis) only then: a library
// user who never opens a store loads none of them.

const SCHEMES = ['memory', 'sqlite', 'postgres', 'postgresql', 'redis', 'rediss'];

export async function openStore(url: string, options: StoreOptions = {}): Promise<RunStore> {
  checkDurability(options.durability);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'memory':
      if (url !== 'memory:') throw badUrl(url, "memory: takes nothing after the colon");
      return createMemoryStore();
    case 'sqlite': {
      const file = url.slice('sqlite:'.length);
      if (file === '') throw badUrl(url, 'sqlite: needs a file name, as in sqlite:.toolchain/runs.db');
      const { openSqliteStore } = await import('./sqlite.js');
      return openSqliteStore(file, url, options);
    }
    case 'postgres':
    case 'postgresql': {
      const { openPostgresStore } = await import('./postgres.js');
      return openPostgresStore(parseUrl(url), options);
    }
    case 'redis':
    case 'rediss': {
      const { openRedisStore } = await import('./redis.js');
      return openRedisStore(parseUrl(url), options);
    }
    default: {
      const hint = scheme === undefined ? '' : suggestionSuffix(didYouMean(scheme, SCHEMES)?.concat(':'));
      throw badUrl(url, `unknown kind of store${hint}`);
    }
  }
}

function checkDurability(durability: Durability | undefined): void {
  if (durability === undefined || durability === 'none' || durability === 'normal' || durability === 'full') return;
  throw new ToolchainError('USAGE', `durability: expected 'none', 'normal' or 'full', got ${JSON.stringify(durability)}`);
}

function parseUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw badUrl(url, 'not a valid URL');
  }
}
