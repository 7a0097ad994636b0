import type { ErrorObject } from 'ajv';
import { didYouMean, suggestionSuffix } from '../common/errors.js';
import { childPointer } from '../common/json-pointer.js';

// What the chain and manifest schema checks say alike about Ajv's errors.

/** An `additionalProperties` error as an unknown key, placed at the key, with did-you-mean. */
export function unknownKey(e: ErrorObject, where: string): { pointer: string; message: string; suggestion?: string } {
  const key = String((e.params as { additionalProperty: string }).additionalProperty);
  const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {}).filter((k) => k !== '$schema');
  const suggestion = didYouMean(key, allowed);
  return {
    pointer: childPointer(e.instancePath, key),
    message: key === '<<'
      ? `unknown key '<<' in ${where}: YAML merge keys are not supported (files are YAML 1.2, where '<<' is an ordinary key); write the keys out`
      : `unknown key '${key}' in ${where}${suggestionSuffix(suggestion)}; allowed: ${allowed.join(', ')}`,
    ...(suggestion ? { suggestion } : {}),
  };
}
