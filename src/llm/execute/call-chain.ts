import type { ChainPlan } from '../../compiler/plan.js';
import type { Engine } from '../../engine.js';
import { formatProblems } from '../../registry/argument-problems.js';
import { toToolError } from '../../registry/handler-error.js';
import { checkRunInput } from '../../executor/run-inputs.js';
import type { EventListener } from '../../executor/events.js';
import type { ApproveCallback } from '../../registry/types.js';
import { failed, type CallOutcome } from './call-outcome.js';
import { createDeadline } from './deadline.js';

// A call of a chain is a run of it (SPEC §4: a chain is a tool whose parameters are its inputs).
// The input is checked first so that a bad one is answered in the same words as a tool's bad
// arguments (the run would check it again, and say it differently). The chain's own steps keep
// their own timeouts, retries and approvals; the answer is the run's outputs.

export interface ChainCallSettings {
  readonly signal: AbortSignal | undefined;
  readonly approve: ApproveCallback | undefined;
  readonly timeoutMs: number | undefined;
  readonly onEvent: EventListener | undefined;
}

export async function callChain(engine: Pick<Engine, 'run'>, plan: ChainPlan, shownName: string, args: Record<string, unknown>, settings: ChainCallSettings): Promise<CallOutcome> {
  const input = checkRunInput(plan, args);
  if (!input.ok) return failed({ code: 'VALIDATION_FAILED', message: formatProblems(shownName, input.problems) }, 0);
  const deadline = createDeadline(`chain '${shownName}'`, settings.timeoutMs, settings.signal);
  try {
    const result = await deadline.race(
      engine.run(plan.name, args, {
        signal: deadline.controller.signal,
        ...(settings.approve ? { approve: settings.approve } : {}),
        ...(settings.onEvent ? { onEvent: settings.onEvent } : {}),
      }),
    );
    if (result.status === 'succeeded') return { ok: true, value: result.outputs, attempts: 1 };
    const error = result.error ?? { code: 'TOOL_ERROR', message: 'the run failed' };
    const where = error.step !== undefined && !error.message.includes(`'${error.step}'`) ? ` at step '${error.step}'` : '';
    return failed({ code: error.code, message: `chain '${shownName}' failed${where}: ${error.message}` }, 1);
  } catch (error) {
    // TIMEOUT or ABORTED from the deadline (engine.run itself resolves, failed or not).
    return failed(toToolError(error, shownName), 1);
  }
}
