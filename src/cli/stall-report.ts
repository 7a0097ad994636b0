import { ToolchainError } from '../common/errors.js';
import type { ChainPlan } from '../compiler/plan.js';
import type { RunEvent } from '../run-model/events.js';

// A step whose tool never settles, with no timeout, leaves a run that nothing can finish: once
// the event loop has nothing else to do, Node would end `toolchain run` with exit code 13 and no
// output. Instead, the moment the loop runs empty (`beforeExit`) with steps still running, the
// run is stopped with TOOL_STALLED, naming those steps and their tools, and ends like any
// failed run.

export interface StallReport {
  readonly onEvent: (event: RunEvent) => void;
  readonly release: () => void;
}

export function reportStalls(chain: (name: string) => ChainPlan | undefined, stop: (reason: ToolchainError) => void): StallReport {
  const running = new Map<string, { chain: string; step: string }>();
  const onEvent = (e: RunEvent): void => {
    if (e.type !== 'step:started' && e.type !== 'step:succeeded' && e.type !== 'step:failed' && e.type !== 'step:skipped') return;
    // An agent's model may call one tool several times at once: each call is its own step.
    const key = `${e.run_id}\u0000${e.step}\u0000${e.call?.id ?? ''}`;
    if (e.type === 'step:started') running.set(key, { chain: e.chain, step: e.step });
    else running.delete(key);
  };
  const onEmpty = (): void => {
    if (running.size === 0) return;
    const named = [...running.values()].slice(0, 3).map(({ chain: c, step }) => {
      const target = chain(c)?.steps.find((s) => s.name === step)?.target;
      return `step '${step}'${target?.kind === 'tool' ? ` (tool '${target.tool}')` : ''}`;
    });
    const more = running.size > 3 ? ` and ${running.size - 3} more` : '';
    running.clear();
    stop(new ToolchainError('TOOL_STALLED', `${named.join(', ')}${more} never settled, and nothing else was left to wait for; give the step a timeout`));
  };
  process.on('beforeExit', onEmpty);
  return { onEvent, release: () => void process.off('beforeExit', onEmpty) };
}
