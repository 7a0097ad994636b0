import type { Diagnostic } from '../common/errors.js';
import { loadDiagnostic } from './diagnostic.js';

// A file can hold a million problems (a megabyte of `]`); printing them all is its own denial of
// service. Each file reports its first `max` problems and one more line that counts the rest.

/** The first `max` diagnostics, then one that says how many more there were. */
export function capDiagnostics(diagnostics: Diagnostic[], max: number, file: string, stopped = false): Diagnostic[] {
  if (diagnostics.length <= max) return diagnostics;
  const kept = diagnostics.slice(0, max);
  const rest = diagnostics.length - max;
  const last = kept[kept.length - 1];
  const at = { line: last?.line ?? 1, col: last?.col ?? 1 };
  const more = `${stopped ? 'at least ' : ''}${rest} more problem${rest === 1 ? '' : 's'}`;
  const why = stopped ? '; reading stopped there' : '';
  kept.push(loadDiagnostic('YAML_LIMIT', `and ${more} in this file (only the first ${max} are listed${why})`, file, at));
  return kept;
}
