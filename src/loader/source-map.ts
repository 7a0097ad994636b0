import type { LineCounter } from 'yaml';
import { START } from './diagnostic.js';
import type { SourceMap, SourcePosition } from './types.js';

function parentPointer(pointer: string): string {
  const i = pointer.lastIndexOf('/');
  return i <= 0 ? '' : pointer.slice(0, i);
}

export function positionAt(lineCounter: LineCounter, offset: number): SourcePosition {
  const { line, col } = lineCounter.linePos(offset);
  // line 0 means no line start was ever recorded: the offset is on the first line.
  return line === 0 ? { line: 1, col: offset + 1 } : { line, col };
}

/**
 * Offsets only, kept from the one walk over the AST; line and column are computed on demand,
 * since most pointers are never asked for.
 */
export class OffsetSourceMap implements SourceMap {
  constructor(
    private readonly values: ReadonlyMap<string, number>,
    private readonly keys: ReadonlyMap<string, number>,
    private readonly lineCounter: LineCounter,
  ) {}

  valueAt(pointer: string): SourcePosition {
    // Each step strictly shortens the pointer, so this ends at the root.
    for (let p = pointer; ; p = parentPointer(p)) {
      const offset = this.values.get(p);
      if (offset !== undefined) return positionAt(this.lineCounter, offset);
      if (p === '') return START;
    }
  }

  keyAt(pointer: string): SourcePosition {
    const offset = this.keys.get(pointer);
    return offset === undefined ? this.valueAt(pointer) : positionAt(this.lineCounter, offset);
  }
}
