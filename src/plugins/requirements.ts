import semver from 'semver';
import { cycles, keyedGraph, pathText, shortestPath } from '../common/directed-graph.js';
import { closestNames, type Diagnostic } from '../common/errors.js';
import type { Requirement } from './parse-requirement.js';

// Which loaded plugins may be active. A plugin is inactive when a requirement is missing or only
// present at the wrong version, when it sits on a requirement cycle, when another plugin already
// has its name, or when everything that could satisfy one of its requirements is itself inactive.
// Pure: the host calls it after every change, so dependents go inactive with a removed or broken
// plugin and come back with it.

export interface Candidate {
  /** Identifies the candidate (the host uses its folder). */
  readonly key: string;
  readonly name: string;
  readonly version: string;
  readonly capabilities: readonly string[];
  readonly requirements: readonly Requirement[];
  /** Where diagnostics point. */
  readonly file?: string;
}

/** Per candidate key: why it is inactive; an empty list means active. */
export type Resolution = Map<string, Diagnostic[]>;

/** Placed at the requirement it is about, when there is one. */
function problem(candidate: Candidate, code: Diagnostic['code'], message: string, r?: Requirement): Diagnostic {
  const at = r?.line !== undefined ? { line: r.line, ...(r.col !== undefined ? { col: r.col } : {}) } : {};
  return { code, severity: 'error', message, ...(candidate.file ? { file: candidate.file } : {}), ...at };
}

function satisfies(version: string, range: string): boolean {
  return semver.satisfies(version, range, { includePrerelease: true });
}

/** Candidates earlier in the list win a name clash (the host lists the currently active first). */
export function resolveRequirements(candidates: readonly Candidate[]): Resolution {
  const result: Resolution = new Map(candidates.map((c) => [c.key, []]));
  const byName = new Map<string, Candidate>();
  for (const c of candidates) {
    const holder = byName.get(c.name);
    if (holder) result.get(c.key)!.push(problem(c, 'PLUGIN_DUPLICATE', `plugin name '${c.name}' is already used by the plugin in ${holder.file ?? holder.key}`));
    else byName.set(c.name, c);
  }
  const live = [...byName.values()];
  const providers = new Map<string, Candidate[]>();
  for (const c of live) {
    for (const provided of new Set([c.name, ...c.capabilities])) {
      providers.set(provided, [...(providers.get(provided) ?? []), c]);
    }
  }

  // For each candidate and requirement: who could satisfy it.
  const satisfiers = new Map<string, Candidate[][]>();
  for (const c of live) {
    const lists: Candidate[][] = [];
    for (const r of c.requirements) {
      const offered = (providers.get(r.name) ?? []).filter((p) => p !== c);
      const fitting = offered.filter((p) => satisfies(p.version, r.range));
      lists.push(fitting);
      if (offered.length === 0) {
        const close = closestNames(r.name, [...providers.keys()].filter((n) => n !== c.name), 1)[0];
        const hint = close ? ` (closest: '${close}')` : '';
        result.get(c.key)!.push(problem(c, 'PLUGIN_REQUIREMENT', `plugin '${c.name}' requires '${r.source.trim()}', which no plugin provides${hint}`, r));
      } else if (fitting.length === 0) {
        const have = offered.map((p) => `${p.name} ${p.version}`).join(', ');
        result.get(c.key)!.push(problem(c, 'PLUGIN_REQUIREMENT', `plugin '${c.name}' requires '${r.name} ${r.range}', but only ${have} is available`, r));
      }
    }
    satisfiers.set(c.key, lists);
  }

  for (const { members, path: cycle } of findCycles(live, satisfiers)) {
    const path = pathText(cycle.map((c) => c.name));
    for (const c of members) {
      result.get(c.key)!.push(problem(c, 'PLUGIN_CYCLE', `plugin '${c.name}' is on a requirement cycle: ${path}`));
    }
  }

  // Whoever depends only on inactive plugins goes inactive too, until nothing changes.
  const inactive = (c: Candidate): boolean => result.get(c.key)!.length > 0;
  for (let changed = true; changed; ) {
    changed = false;
    for (const c of live) {
      if (inactive(c)) continue;
      const lists = satisfiers.get(c.key)!;
      c.requirements.forEach((r, i) => {
        const fitting = lists[i]!;
        if (inactive(c) || fitting.length === 0 || fitting.some((p) => !inactive(p))) return;
        const names = fitting.map((p) => `'${p.name}'`).join(', ');
        result.get(c.key)!.push(problem(c, 'PLUGIN_REQUIREMENT', `plugin '${c.name}' requires '${r.source.trim()}', but ${names} ${fitting.length === 1 ? 'is' : 'are'} inactive`, r));
        changed = true;
      });
    }
  }
  return result;
}

/**
 * Each requirement cycle (a plugin never satisfies its own requirement, so every cycle has two
 * plugins or more), and the shortest closed path round it (first = last) to show in the message.
 */
function findCycles(nodes: readonly Candidate[], satisfiers: ReadonlyMap<string, Candidate[][]>): { members: Candidate[]; path: Candidate[] }[] {
  const { keys, next } = keyedGraph(nodes, (c) => (satisfiers.get(c.key) ?? []).flat());
  return cycles(next).map((component) => {
    const members = new Set(component);
    const start = component[component.length - 1]!;
    const path = shortestPath(start, start, next, (i) => members.has(i))!;
    return { members: component.map((i) => keys[i]!), path: path.map((i) => keys[i]!) };
  });
}
