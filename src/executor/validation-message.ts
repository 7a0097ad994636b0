import type { PlanStep } from '../compiler/plan.js';
import { pointerTokens } from '../common/json-pointer.js';
import type { ArgumentProblem } from '../registry/types.js';

// VALIDATION_FAILED worded so the chain's author sees where a bad argument came from: the step,
// each key, and — when a key's JSONPath matched nothing and so the key was left out (SPEC §2.2) —
// the path behind it: "key 'city' from $.locate.city matched nothing".

function topKey(path: string): string | undefined {
  return pointerTokens(path)[0];
}

export function validationMessage(
  step: PlanStep,
  tool: string,
  args: Record<string, unknown>,
  problems: readonly ArgumentProblem[],
  sources: Readonly<Record<string, string>> = step.input.sources,
): string {
  const parts = problems.map((p) => {
    const key = topKey(p.path);
    const source = key === undefined ? undefined : sources[key];
    if (key !== undefined && source !== undefined && args[key] === undefined) {
      return `${p.message} (key '${key}' from ${source} matched nothing)`;
    }
    return key === undefined ? p.message : `key '${key}': ${p.message}`;
  });
  return `step '${step.name}': invalid arguments for tool '${tool}': ${parts.join('; ')}`;
}
