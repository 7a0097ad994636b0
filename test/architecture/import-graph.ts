import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// The runtime imports between the folders of src/, read from the sources. Under
// `verbatimModuleSyntax`, `import type …` and `export type … from` vanish from the output and every
// other import stays (even `import { type X }`, which becomes `import {}`), so that is the rule.

export const SRC = join(import.meta.dirname, '..', '..', 'src');

export function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `executor` for src/executor/run.ts; `.` for files directly in src/. */
export function folderOf(file: string): string {
  const rel = relative(SRC, file);
  return rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : '.';
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"](\.[^'"]+)['"]|^\s*import\s*['"](\.[^'"]+)['"]/gm;

/** Relative imports of one file, as absolute .ts paths: runtime ones, or type imports too. */
export function runtimeImports(file: string, withTypes = false): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const typeOnly = m[2] !== undefined;
    const spec = m[4] ?? m[5]!;
    if (typeOnly && !withTypes) continue;
    out.push(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
  }
  if (withTypes) for (const m of text.matchAll(TYPE_QUERY)) out.push(resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts'));
  return out;
}

/** `import('./x.js')` in a type position (and dynamic imports): a dependency as much as an import is. */
const TYPE_QUERY = /import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/**
 * The names the files of folder `from` import from the files of folder `to`, type imports
 * included, sorted: `Name` for `{ Name }` or `{ type Name }` (an alias counts by the name it
 * imports), `*` for a namespace, a dynamic import or an `import('…')` type, `default` for a default.
 */
export function importedNames(from: string, to: string): string[] {
  const names = new Set<string>();
  for (const file of sourceFiles().filter((f) => folderOf(f) === from)) {
    const text = readFileSync(file, 'utf8');
    const into = (spec: string): boolean => folderOf(resolve(dirname(file), spec)) === to;
    for (const m of text.matchAll(IMPORT)) {
      if (m[4] === undefined || !into(m[4])) continue;
      const clause = m[3]!;
      const braces = /\{([^}]*)\}/.exec(clause);
      for (const item of braces?.[1]!.split(',') ?? []) {
        const name = item.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!;
        if (name !== '') names.add(name);
      }
      if (clause.includes('*')) names.add('*');
      if (/^[\w$]+\s*(,|$)/.test(clause.replace(/^type\s+/, ''))) names.add('default');
    }
    for (const m of text.matchAll(TYPE_QUERY)) if (into(m[1]!)) names.add('*');
  }
  return [...names].sort();
}

/** Folder → the folders it imports (itself excluded): at run time, or with type imports too. */
export function folderGraph(withTypes = false): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles()) {
    const from = folderOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const target of runtimeImports(file, withTypes)) {
      const to = folderOf(target);
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** File → the files of its own folder it imports at run time, for one folder of src/ (paths relative to src/). */
export function fileGraph(folder: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles().filter((f) => folderOf(f) === folder)) {
    const inside = runtimeImports(file).filter((target) => folderOf(target) === folder);
    graph.set(relative(SRC, file), new Set(inside.map((target) => relative(SRC, target))));
  }
  return graph;
}

/** Every cycle's nodes (strongly connected components of more than one node): folders, or files. */
export function folderCycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return cycles;
}
