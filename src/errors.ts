import { printable } from './printable.js';

// Diagnostics are data: a closed set of codes, a place in a file, and a message. Only the CLI
// turns them into `FILE:LINE:COL CODE message` lines; tests assert codes and positions.

export type DiagnosticCode =
  // loading
  | 'FILE_UNREADABLE'
  | 'FILE_TOO_LARGE'
  | 'YAML_SYNTAX'
  | 'YAML_LIMIT'
  | 'YAML_DUPLICATE_KEY'
  | 'YAML_MULTI_DOCUMENT'
  | 'FORBIDDEN_KEY'
  // chain shape
  | 'SCHEMA_INVALID'
  | 'UNKNOWN_KEY'
  | 'MISSING_KEY'
  | 'BAD_TYPE'
  | 'BAD_VALUE'
  | 'BAD_NAME'
  | 'BAD_DURATION'
  | 'DUPLICATE_NAME'
  | 'DUPLICATE_CHAIN'
  | 'NAME_COLLISION'
  // references and graph
  | 'UNKNOWN_REFERENCE'
  | 'UNKNOWN_STEP'
  | 'FORWARD_REFERENCE'
  | 'SELF_DEPENDENCY'
  | 'CHAIN_CYCLE'
  | 'SUBCHAIN_CYCLE'
  | 'UNKNOWN_TOOL'
  | 'UNKNOWN_CHAIN'
  // expressions
  | 'BAD_JSONPATH'
  | 'BAD_TEMPLATE'
  | 'BAD_EXPRESSION'
  // plugins
  | 'PLUGIN_INVALID'
  | 'PLUGIN_DUPLICATE'
  | 'PLUGIN_REQUIREMENT'
  | 'PLUGIN_CYCLE'
  | 'HANDLER_ESCAPE'
  | 'HANDLER_LOAD'
  | 'BAD_SEMVER'
  // running
  | 'CHAIN_NOT_FOUND'
  | 'INPUT_INVALID'
  | 'TOOL_NOT_FOUND'
  | 'VALIDATION_FAILED'
  | 'RESULT_INVALID'
  | 'RESULT_TOO_LARGE'
  | 'TOOL_ERROR'
  | 'TIMEOUT'
  | 'RUN_TIMEOUT'
  | 'ABORTED'
  | 'APPROVAL_DENIED'
  | 'CIRCUIT_OPEN'
  | 'USAGE';

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  /** Path of the file the problem is in, as the user named it. */
  readonly file?: string;
  /** RFC 6901 pointer to the offending node (`/steps/2/input_map/city`). */
  readonly pointer?: string;
  /** 1-based line and column of the offending node. */
  readonly line?: number;
  readonly col?: number;
  /** The closest valid name, when the problem is a misspelling. */
  readonly suggestion?: string;
}

/** An error a user caused, carrying a code tests can assert on and, when it has them, diagnostics. */
export class ToolchainError extends Error {
  readonly code: DiagnosticCode;
  readonly diagnostics: readonly Diagnostic[];

  constructor(code: DiagnosticCode, message: string, diagnostics: readonly Diagnostic[] = []) {
    super(message);
    this.name = 'ToolchainError';
    this.code = code;
    this.diagnostics = diagnostics;
  }
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** `FILE:LINE:COL CODE message` — the one line format of the CLI and of thrown compile errors. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file ? `${d.file}:${d.line ?? 1}:${d.col ?? 1} ` : '';
  return printable(`${where}${d.code} ${d.message}`);
}

/**
 * The closest candidate by edit distance, if it is close enough to be a plausible typo
 * (at most a third of the name's length, and never more than 3 edits).
 */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  for (const candidate of candidates) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  // A one-letter name is "close" to every other one-letter name: require something in common.
  return bestDistance <= limit && bestDistance < name.length ? best : undefined;
}

/** Candidates sorted by closeness, for "unknown tool; closest: a, b, c" answers. */
export function closestNames(name: string, candidates: Iterable<string>, count = 3): string[] {
  // Words in a different order (`time_local` for `local_time`) are far apart by edits but plainly
  // meant: each shared word counts as much as several matching letters.
  const words = new Set(name.toLowerCase().split(/[_\-/.]/));
  return [...candidates]
    .map((c) => {
      const shared = c.toLowerCase().split(/[_\-/.]/).filter((w) => w && words.has(w)).length;
      return { c, d: editDistance(name.toLowerCase(), c.toLowerCase()) - 4 * shared };
    })
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, count)
    .map((x) => x.c);
}

function editDistance(a: string, b: string): number {
  // Damerau (optimal string alignment) distance: a swapped pair of letters counts as one typo.
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[(i - 2) * cols + j - 2]! + 1);
      }
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1]!;
}

/** What kind of JSON value arrived, for "expected X, got Y" messages: `an array`, `null`, `nothing`. */
export function describeKind(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function suggestionSuffix(suggestion: string | undefined): string {
  return suggestion ? ` (did you mean '${suggestion}'?)` : '';
}
