import { basename } from 'node:path';
import type { Diagnostic, ErrorCode } from '../common/errors.js';
import type { ChainSet } from './chain-set.js';

// A chain file that does not parse, or cannot be read, names no chain: asked for a chain by name,
// the engine and the CLI say which such files there are, and treat the one named like the chain
// (`broken.yaml` for `broken`) as the chain itself, with that file's own error.

export interface UnreadChains {
  /** The files that yielded no chain name, because of an error. */
  readonly files: readonly string[];
  /** The one named like the chain asked for, with its first error, if any. */
  readonly same?: { readonly file: string; readonly first: Diagnostic };
}

export function unreadChains(set: Pick<ChainSet, 'files' | 'diagnostics'>, name: string): UnreadChains {
  const named = new Set(set.files.filter((f) => f.name !== undefined).map((f) => f.file));
  const files = [...new Set(set.diagnostics.filter((d) => d.severity === 'error' && d.file !== undefined && !named.has(d.file)).map((d) => d.file!))];
  const file = files.find((f) => basename(f).replace(/\.ya?ml$/, '') === name);
  const first = file === undefined ? undefined : set.diagnostics.find((d) => d.file === file && d.severity === 'error');
  return { files, ...(file !== undefined && first !== undefined ? { same: { file, first } } : {}) };
}

/** The refusal for a chain that is nowhere, or whose file could not be read; `suggestion` is the closest name's suffix. */
export function chainNotFound(set: Pick<ChainSet, 'files' | 'diagnostics'>, name: string, suggestion: string): { code: ErrorCode; message: string; diagnostics: readonly Diagnostic[] } {
  const unread = unreadChains(set, name);
  if (unread.same) {
    const { file, first } = unread.same;
    return { code: first.code, message: `chain '${name}' cannot be read: ${file}:${first.line ?? 1}:${first.col ?? 1} ${first.message} (run toolchain validate)`, diagnostics: set.diagnostics.filter((d) => d.file === file) };
  }
  const n = unread.files.length;
  const more = n ? `; ${n} chain file${n === 1 ? '' : 's'} could not be read (${unread.files.slice(0, 3).map((f) => basename(f)).join(', ')}${n > 3 ? ', …' : ''}; run toolchain validate)` : '';
  return { code: 'CHAIN_NOT_FOUND', message: `no chain named '${name}'${suggestion}${more}`, diagnostics: [] };
}
