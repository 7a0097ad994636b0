import type { Diagnostic, ErrorCode } from '../common/errors.js';
import type { SourceMap } from './types.js';

/** Collects the problems of one file, each placed at its node through the source map. */
export class DiagnosticSink {
  readonly diagnostics: Diagnostic[] = [];
  private readonly seen = new Set<string>();

  constructor(
    readonly file: string,
    private readonly map: SourceMap,
  ) {}

  /** Reports at the value of `pointer`, or at its key with `atKey` (unknown keys, names). */
  error(code: ErrorCode, pointer: string, message: string, options: { atKey?: boolean; suggestion?: string; offset?: number } = {}): void {
    const key = `${code} ${pointer} ${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const pos = options.atKey ? this.map.keyAt(pointer) : this.map.valueAt(pointer);
    this.diagnostics.push({
      code,
      severity: 'error',
      message,
      file: this.file,
      pointer,
      line: pos.line,
      col: pos.col,
      ...(options.suggestion ? { suggestion: options.suggestion } : {}),
      ...(options.offset !== undefined ? { offset: options.offset } : {}),
    });
  }

  get failed(): boolean {
    return this.diagnostics.length > 0;
  }
}
