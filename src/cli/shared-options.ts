import { ToolchainError } from '../common/errors.js';
import { isIsolationLevel, type IsolationLevel } from '../plugins/index.js';
import type { RecoveryEvent } from '../runs/recovery.js';


// What several commands parse the same way.

/** Commander's accumulator for a repeatable option (`--input a=1 --input b=2`). */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];


/** `--isolation none|worker|process`: where plugin handlers run at least (docs/operations/security-model.md). */
export const ISOLATION_HELP = 'run every plugin\'s handlers at least this isolated: none, worker (threads) or process';

export function isolationFlag(text: string): IsolationLevel {
  if (isIsolationLevel(text)) return text;
  throw new ToolchainError('USAGE', `--isolation must be none, worker or process, got '${text}'`);
}

/** `--no-recover` on the commands that stay up. */
export const RECOVER_HELP = 'do not resume, at start and every few seconds, the runs on the store whose process died (they wait for toolchain resume)';

/** One line per recovery event. */
export function describeRecovery(e: RecoveryEvent): string {
  switch (e.type) {
    case 'recovery:resumed':
      return `run ${e.run_id} (${e.chain}) was interrupted: resuming it`;
    case 'recovery:finished':
      return `run ${e.run_id} (${e.chain}) resumed: ${e.status}${e.error ? ` (${e.error.code} ${e.error.message})` : ''}`;
    case 'recovery:refused':
      return `run ${e.run_id} (${e.chain}) left interrupted: ${e.code} ${e.message}`;
  }
}
