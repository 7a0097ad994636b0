import { pointerTokens } from '../common/json-pointer.js';
import { isRecord, type JsonSchema } from '../common/json.js';
import { expectsJsonPath } from '../compiler/flow/schema-shape.js';
import type { ArgumentProblem } from '../registry/types.js';

// VALIDATION_FAILED worded so the chain's author sees where a bad argument came from: each key,
// and — when a key's JSONPath matched nothing and so the key was left out — the path
// behind it: "key 'city' from $.locate.city matched nothing". The step is named first, unlike a
// step's other errors: a log line or a caller that shows the message alone must still tell which
// step's arguments were wrong.

/** JavaScript's `.length`, which a JSONPath reads as a member named length. */
function lengthHint(source: string): string {
  return /(?:\.length|\[\s*(['"])length\1\s*\])\s*$/.test(source) ? ": in JSONPath '.length' selects a member named length, which arrays and strings do not have" : '';
}

function topKey(path: string): string | undefined {
  return pointerTokens(path)[0];
}

/**
 * `callee.describe` is how it is named: `tool 'geo/find_city'`, `chain 'city_brief'`; a tool's
 * `parameters` tell a key that takes a JSONPath as text, for which the `$$` escape is the fix.
 */
export function validationMessage(
  step: string,
  callee: { readonly describe: string; readonly parameters?: JsonSchema },
  args: Record<string, unknown>,
  problems: readonly ArgumentProblem[],
  sources: Readonly<Record<string, string>>,
): string {
  const parts = problems.map((p) => {
    const key = topKey(p.path);
    const source = key === undefined ? undefined : sources[key];
    if (key === undefined) return p.message;
    const param = isRecord(callee.parameters?.properties) ? callee.parameters.properties[key] : undefined;
    const escape = source !== undefined && isRecord(param) && expectsJsonPath(param) ? `; ${source} was read as a reference into the run: to pass the JSONPath itself, write '$${source}'` : '';
    if (source !== undefined && args[key] === undefined) return `${p.message} (key '${key}' from ${source} matched nothing${lengthHint(source)}${escape})`;
    return `key '${key}': ${p.message}${escape}`;
  });
  return `step '${step}': invalid arguments for ${callee.describe}: ${parts.join('; ')}`;
}
