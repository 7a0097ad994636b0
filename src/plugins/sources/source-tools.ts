import { createHash } from 'node:crypto';
import { didYouMean, suggestionSuffix, type Diagnostic } from '../../common/errors.js';
import type { SourceMap } from '../../loader/index.js';
import type { ToolDefinition } from '../../registry/types.js';
import type { ToolchainPluginManifest } from '../manifest.generated.js';

// What every source does with the tools it found: names made valid for the registry and for
// models, `include`/`exclude` applied, and the manifest's `tools` entries laid over the tools
// they name. A name in a filter or an entry that matches no tool is a warning with the closest
// name, at its line; the plugin still loads. A tool the engine cannot call (a multipart
// operation, an MCP tool that runs only as a task) is left out with a warning when the filters
// keep it, and silently when they do not.

export interface SourceTool {
  /** The tool's name in the registry (valid: see toolName). */
  readonly name: string;
  /** What the source calls it (an MCP tool's name, an operationId): filters and entries may use these too. */
  readonly aliases: readonly string[];
  /** OpenAPI tags, for `include: { tags }`. */
  readonly tags?: readonly string[];
  readonly def: ToolDefinition;
  /** Why the engine cannot call it, and where in the manifest to say so: it is left out. */
  readonly unsupported?: { readonly message: string; readonly pointer: string };
}

export interface SourceTools {
  readonly defs: readonly ToolDefinition[];
  /** Per def: the index of the manifest's `tools` entry that adjusts it, or -1. */
  readonly toolIndex: readonly number[];
  readonly warnings: readonly Diagnostic[];
}

const MAX_NAME = 64;

/** Letters, digits, `_` and `-`, starting with a letter or `_`, at most 64: what the registry, OpenAI and Anthropic accept. */
export function toolName(raw: string): string {
  let name = raw.replace(/[^A-Za-z0-9_-]/g, '_');
  if (!/^[A-Za-z_]/.test(name)) name = `_${name}`;
  if (name.length <= MAX_NAME) return name;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME - 9)}_${hash}`;
}

/** Valid, distinct names for `raws` in order; a name already taken gets `_2`, `_3`… and is reported. */
export function distinctNames(raws: readonly string[]): { names: string[]; clashes: { raw: string; first: string; name: string }[] } {
  const taken = new Map<string, string>();
  const clashes: { raw: string; first: string; name: string }[] = [];
  const names = raws.map((raw) => {
    const base = toolName(raw);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = toolName(`${base.slice(0, MAX_NAME - String(n).length - 1)}_${n}`);
    if (name !== base) clashes.push({ raw, first: taken.get(base)!, name });
    taken.set(name, raw);
    return name;
  });
  return { names, clashes };
}

export function applyManifest(found: readonly SourceTool[], manifest: ToolchainPluginManifest, file: string, sourceMap: SourceMap): SourceTools {
  const warnings: Diagnostic[] = [];
  const warn = (pointer: string, message: string, suggestion?: string): void => {
    const { line, col } = sourceMap.valueAt(pointer);
    warnings.push({ code: 'UNKNOWN_TOOL', severity: 'warning', message, file, pointer, line, col, ...(suggestion ? { suggestion } : {}) });
  };
  const known = new Set(found.flatMap((t) => [t.name, ...t.aliases]));
  const spellings = found.map((t) => t.name);
  const matches = (t: SourceTool, names: ReadonlySet<string>): boolean => names.has(t.name) || t.aliases.some((a) => names.has(a));
  const checkNames = (names: readonly string[] | undefined, pointer: string, what: string): void => {
    (names ?? []).forEach((n, i) => {
      if (known.has(n)) return;
      const close = didYouMean(n, spellings);
      warn(`${pointer}/${i}`, `${what} '${n}' names no tool of this source${suggestionSuffix(close)}`, close);
    });
  };

  const source = manifest.source ?? {};
  let kept = [...found];
  const include = source.include;
  if (Array.isArray(include)) {
    checkNames(include, '/source/include', 'include');
    const set = new Set(include);
    kept = kept.filter((t) => matches(t, set));
  } else if (include) {
    checkNames(include.operations, '/source/include/operations', 'include');
    const tags = new Set(include.tags ?? []);
    const ops = new Set(include.operations ?? []);
    const allTags = new Set(found.flatMap((t) => t.tags ?? []));
    (include.tags ?? []).forEach((tag, i) => {
      if (!allTags.has(tag)) warn(`/source/include/tags/${i}`, `include: no operation has the tag '${tag}'${suggestionSuffix(didYouMean(tag, allTags))}`);
    });
    kept = kept.filter((t) => matches(t, ops) || (t.tags ?? []).some((tag) => tags.has(tag)));
  }
  if (source.exclude) {
    checkNames(source.exclude, '/source/exclude', 'exclude');
    const set = new Set(source.exclude);
    kept = kept.filter((t) => !matches(t, set));
  }

  for (const t of kept) {
    if (!t.unsupported) continue;
    const { line, col } = sourceMap.valueAt(t.unsupported.pointer);
    warnings.push({ code: 'PLUGIN_INVALID', severity: 'warning', message: t.unsupported.message, file, pointer: t.unsupported.pointer, line, col });
  }
  kept = kept.filter((t) => !t.unsupported);

  const entries = manifest.tools ?? [];
  const entryOf = new Map<SourceTool, number>();
  entries.forEach((entry, index) => {
    const target = found.find((t) => t.name === entry.name || t.aliases.includes(entry.name));
    if (!target) {
      const close = didYouMean(entry.name, spellings);
      warn(`/tools/${index}/name`, `tool '${entry.name}' is not one this source provides${suggestionSuffix(close)}; the entry is ignored`, close);
      return;
    }
    entryOf.set(target, index);
  });

  const defs: ToolDefinition[] = [];
  const toolIndex: number[] = [];
  for (const t of kept) {
    const index = entryOf.get(t);
    const entry = index === undefined ? undefined : entries[index]!;
    defs.push(
      entry
        ? {
            ...t.def,
            ...(entry.description !== undefined ? { description: entry.description } : {}),
            ...(entry.timeout !== undefined ? { timeout: entry.timeout } : {}),
            ...(entry.dangerous !== undefined ? { dangerous: entry.dangerous } : {}),
            ...(entry.truncate !== undefined ? { truncate: entry.truncate } : {}),
            ...(entry.cache !== undefined ? { cache: entry.cache } : {}),
            ...(entry.circuit_breaker !== undefined ? { circuit_breaker: entry.circuit_breaker } : {}),
          }
        : t.def,
    );
    toolIndex.push(index ?? -1);
  }
  return { defs, toolIndex, warnings };
}
