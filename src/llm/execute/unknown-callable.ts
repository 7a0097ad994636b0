import { closestNames } from '../../common/errors.js';
import type { ToolSet } from '../../registry/types.js';
import type { ExportNames } from '../export/export-names.js';
import { failedOutcome, type CallOutcome } from '../../call/index.js';

// An unknown name, answered in the registry's words (registry/tool-not-found.ts: TOOL_NOT_FOUND,
// the plugin that used to provide it, the closest names) — but the names suggested are exported
// names, the ones the model can call. Closeness is measured against every spelling of a callable
// (`alpha__lookup`, `lookup`, `alpha/lookup`), so a typo of the bare name still finds the prefixed
// export. (toolNotFound itself would rank the exported names alone, and `lookpu` would find
// `wipe` before `alpha__lookup`.)

const SUGGESTIONS = 3;

export function closestCallables(names: ExportNames, name: string): string[] {
  const spellings = new Map<string, string[]>();
  for (const c of names.callables) {
    for (const spelling of new Set([c.exportedName, c.baseName, c.target])) {
      const list = spellings.get(spelling) ?? [];
      list.push(c.exportedName);
      spellings.set(spelling, list);
    }
  }
  const suggestions: string[] = [];
  for (const spelling of closestNames(name, spellings.keys(), spellings.size)) {
    for (const exported of spellings.get(spelling) ?? []) if (!suggestions.includes(exported)) suggestions.push(exported);
    if (suggestions.length >= SUGGESTIONS) break;
  }
  return suggestions.slice(0, SUGGESTIONS);
}

export function unknownCallable(tools: ToolSet, names: ExportNames, name: string): CallOutcome {
  const shown = name === '' ? '(no name)' : name;
  const former = name === '' ? undefined : tools.formerProvider(name);
  const closest = closestCallables(names, name);
  const gone = former ? `; it was provided by plugin '${former}', which no longer provides it` : '';
  const hint = closest.length > 0 ? `; closest: ${closest.join(', ')}` : '; no tools or chains are available';
  return failedOutcome({ code: 'TOOL_NOT_FOUND', message: `unknown tool '${shown}'${gone}${hint}` });
}
