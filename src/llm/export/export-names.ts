import { createHash } from 'node:crypto';
import type { Callable, CallableSource } from './callables.js';
import { listCallables } from './callables.js';

// The names a model sees, and the way back from them. OpenAI and Anthropic both want function
// names matching ^[a-zA-Z0-9_-]{1,64}$, so `geo/find_city` cannot be used as it is. The rule:
//
//   a plugin tool   its bare name (`find_city`) when no other tool or chain has that name, else
//                   `plugin__tool` (`geo__find_city`)
//   a code tool     its name (code has the last word, as in the registry)
//   a chain         its name, unless a tool from code has the same one: then `chain__name`
//
// Any character outside the allowed set becomes `_`; a name longer than 64 characters keeps its
// first 55 and ends in `_` and 8 hex digits of its hash; a name still taken gets `_2`, `_3`…
// Because the last steps could make two names meet, routing never splits a name on `__`: it
// looks the name up in the map built here (`resolve`), which also accepts the qualified name
// (`geo/find_city`) and, when it is unambiguous, the chain's or tool's own name.
// MCP uses the same names, so one map serves every format.

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;

export interface ExportedCallable extends Callable {
  /** The name in every export format. */
  readonly exportedName: string;
}

export interface ExportNames {
  /** Every callable with its exported name, tools first, then chains. */
  readonly callables: readonly ExportedCallable[];
  /** The callable a model's name means: an exported name, a qualified tool name, or an unambiguous bare name. */
  resolve(name: string): ExportedCallable | undefined;
  /** Every exported name (for "closest names" answers). */
  names(): string[];
}

function sanitise(name: string): string {
  const clean = name.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
  if (clean.length <= MAX) return clean;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${clean.slice(0, MAX - 9)}_${hash}`;
}

function preferredName(c: Callable, counts: ReadonlyMap<string, number>, codeTools: ReadonlySet<string>): string {
  if (c.kind === 'chain') return codeTools.has(c.baseName) ? `chain__${c.baseName}` : c.baseName;
  if (c.plugin === undefined) return c.baseName;
  return (counts.get(c.baseName) ?? 0) > 1 ? `${c.plugin}__${c.baseName}` : c.baseName;
}

export function exportNames(source: CallableSource | readonly Callable[]): ExportNames {
  const list = Array.isArray(source) ? (source as readonly Callable[]) : listCallables(source as CallableSource);
  const counts = new Map<string, number>();
  const codeTools = new Set<string>();
  for (const c of list) {
    counts.set(c.baseName, (counts.get(c.baseName) ?? 0) + 1);
    if (c.kind === 'tool' && c.plugin === undefined) codeTools.add(c.baseName);
  }
  const byName = new Map<string, ExportedCallable>();
  const callables: ExportedCallable[] = [];
  for (const c of list) {
    const base = sanitise(preferredName(c, counts, codeTools));
    let name = base;
    for (let n = 2; byName.has(name); n++) name = sanitise(`${base.slice(0, MAX - String(n).length - 1)}_${n}`);
    const exported: ExportedCallable = { ...c, exportedName: name };
    byName.set(name, exported);
    callables.push(exported);
  }
  // Other spellings a model (or a human) may use, when they point at one callable only.
  const aliases = new Map<string, ExportedCallable | null>();
  const alias = (key: string, c: ExportedCallable): void => {
    if (byName.has(key)) return;
    const held = aliases.get(key);
    aliases.set(key, held === undefined || held === c ? c : null);
  };
  for (const c of callables) {
    alias(c.target, c);
    alias(c.baseName, c);
  }
  return {
    callables,
    resolve: (name) => byName.get(name) ?? aliases.get(name) ?? undefined,
    names: () => [...byName.keys()],
  };
}

/** True when a name is valid for OpenAI and Anthropic function definitions. */
export function isValidFunctionName(name: string): boolean {
  return VALID.test(name);
}
