import { ToolchainError } from '../common/errors.js';
import { isIsolationLevel, type IsolationLevel } from '../plugins/index.js';


// What several commands parse the same way.

/** Commander's accumulator for a repeatable option (`--input a=1 --input b=2`). */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];


/** `--isolation none|worker|process`: where plugin handlers run at least (docs/operations/security-model.md). */
export const ISOLATION_HELP = 'run every plugin\'s handlers at least this isolated: none, worker (threads) or process';

export function isolationFlag(text: string): IsolationLevel {
  if (isIsolationLevel(text)) return text;
  throw new ToolchainError('USAGE', `--isolation must be none, worker or process, got '${text}'`);
}
