import type { Diagnostic } from '../common/errors.js';

/** 1-based line and column. */
export interface SourcePosition {
  readonly line: number;
  readonly col: number;
}

/** Maps RFC 6901 JSON pointers (`/steps/0/input_map/city`) back to the YAML source. */
export interface SourceMap {
  /** Where the value at `pointer` starts; falls back to the nearest ancestor that exists. */
  valueAt(pointer: string): SourcePosition;
  /** Where the key of the member at `pointer` starts (for unknown-key errors); falls back to `valueAt`. */
  keyAt(pointer: string): SourcePosition;
}

export interface LoadLimits {
  /** Largest file accepted, in bytes. */
  readonly maxBytes: number;
  /** Deepest nesting of collections accepted, checked before the recursive parse. */
  readonly maxDepth: number;
  /** Most alias nodes resolved in one document (alias bombs). */
  readonly maxAliases: number;
  /** Most diagnostics reported for one file; the rest are counted in one last diagnostic. */
  readonly maxDiagnostics: number;
}

export interface LoadedYaml {
  readonly file: string;
  readonly text: string;
  /** The plain JSON-compatible value of the document. */
  readonly value: unknown;
  readonly sourceMap: SourceMap;
}

export interface LoadResult {
  /** Absent when the file could not be parsed at all. */
  readonly document?: LoadedYaml;
  readonly diagnostics: readonly Diagnostic[];
}
