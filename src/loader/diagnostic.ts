import type { Diagnostic, ErrorCode, Severity } from '../common/errors.js';
import type { SourcePosition } from './types.js';

export const START: SourcePosition = Object.freeze({ line: 1, col: 1 });

/** Every loader diagnostic names its file and a 1-based position, so the CLI can always print FILE:LINE:COL. */
export function loadDiagnostic(
  code: ErrorCode,
  message: string,
  file: string,
  at: SourcePosition,
  pointer?: string,
  severity: Severity = 'error',
): Diagnostic {
  const d: Diagnostic = { code, severity, message, file, line: at.line, col: at.col };
  return pointer === undefined ? d : { ...d, pointer };
}
