import { ToolchainError } from '../common/errors.js';
import { parseDuration } from '../expr/index.js';

// Every command-line flag that takes a span of time reads it the way chain files do: `500ms`,
// `10s`, `1.5m`, `1h`, or a bare number of seconds (`10`), so `serve --grace 10s` and
// `worker --grace 30s` are written alike. `allowZero`: `0` (any unit) means "no time at all".

export function durationFlag(name: string, text: string, allowZero: boolean): number {
  const trimmed = text.trim();
  if (allowZero && /^0*(\.0*)?(ms|s|m|h)?$/.test(trimmed) && /\d/.test(trimmed)) return 0;
  const ms = parseDuration(/^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed);
  if (ms === undefined) throw new ToolchainError('USAGE', `--${name} must be a duration such as 500ms, 10s, 1.5m or 1h (a bare number is seconds${allowZero ? '; 0 for none' : ''}), got '${text}'`);
  return ms;
}
