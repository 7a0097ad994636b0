import { ToolchainError } from '../common/errors.js';
import { createMemoryStore } from './memory.js';
import type { RunStore, StoreOptions } from './types.js';

// A store by URL (SPEC §7.1). Placeholder until the drivers land: memory only.

export async function openStore(url: string, _options: StoreOptions = {}): Promise<RunStore> {
  if (url === 'memory:' || url.startsWith('memory:')) return createMemoryStore();
  throw new ToolchainError('STORE_URL', `unknown run store '${url}': use memory:, sqlite:FILE, postgres://… or redis://…`);
}
