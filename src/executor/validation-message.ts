import { pointerTokens } from '../common/json-pointer.js';
import type { ArgumentProblem } from '../registry/types.js';

// VALIDATION_FAILED worded so the chain's author sees where a bad argument came from: each key,
// and — when a key's JSONPath matched nothing and so the key was left out (SPEC §2.2) — the path
// behind it: "key 'city' from $.locate.city matched nothing". The step is not named: whoever shows
// the error knows which step it belongs to.

function topKey(path: string): string | undefined {
  return pointerTokens(path)[0];
}

/** `what` is how the callee is named: `tool 'geo/find_city'`, `chain 'city_brief'`. */
export function validationMessage(
  what: string,
  args: Record<string, unknown>,
  problems: readonly ArgumentProblem[],
  sources: Readonly<Record<string, string>>,
): string {
  const parts = problems.map((p) => {
    const key = topKey(p.path);
    const source = key === undefined ? undefined : sources[key];
    if (key !== undefined && source !== undefined && args[key] === undefined) {
      return `${p.message} (key '${key}' from ${source} matched nothing)`;
    }
    return key === undefined ? p.message : `key '${key}': ${p.message}`;
  });
  return `invalid arguments for ${what}: ${parts.join('; ')}`;
}
