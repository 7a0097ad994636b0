import { ToolchainError } from '../common/errors.js';
import type { AttemptContext } from './attempt-context.js';

// SPEC §2.7: a timeout bounds one attempt, and the attempt fails at the deadline even if the tool
// never looks at its signal. The tool's promise is raced against a timer; at the deadline the
// attempt's signal is aborted (for tools that listen) and the race is lost. Either way the timer
// is cleared, so a finished attempt leaves nothing behind to keep the process alive.

export function withTimeout<T>(work: Promise<T>, ctx: AttemptContext, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = ctx.setTimer(() => {
      const error = new ToolchainError('TIMEOUT', `step '${ctx.step}' timed out after ${ms} ms (attempt ${ctx.attempt})`);
      ctx.abort(error);
      reject(error);
    }, ms);
    work.then(
      (value) => {
        ctx.clearTimer(timer);
        resolve(value);
      },
      (error: unknown) => {
        ctx.clearTimer(timer);
        reject(error as Error);
      },
    );
  });
}
