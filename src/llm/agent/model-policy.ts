import { parseAllowList, type AllowEntry } from '../../net/index.js';
import { ModelError } from './model-error.js';

// Where an agent step may send its requests, and which secret it may send. A chain names its
// endpoint (`base_url`) and the environment variable of its key (`api_key_env`); whoever writes a
// chain must not be able to send the serve token, or any other variable, to an address of their
// choosing. So:
//   - model endpoints follow the address policy of `http_request` (no loopback, private,
//     link-local or metadata address), with their own allow-list, TOOLCHAIN_MODEL_ALLOW (a local
//     model server: TOOLCHAIN_MODEL_ALLOW=127.0.0.1:11434);
//   - `api_key_env` may name only a variable the operator declared for models: the names in
//     TOOLCHAIN_MODEL_KEYS, or — when that is unset — a name ending in `_API_KEY` (OPENAI_API_KEY,
//     …); never one of the engine's own TOOLCHAIN_* variables, whatever the lists say.

export const MODEL_ALLOW_VARIABLE = 'TOOLCHAIN_MODEL_ALLOW';
export const MODEL_KEYS_VARIABLE = 'TOOLCHAIN_MODEL_KEYS';

type Env = (name: string) => string | undefined;

/** Why `name` may not be read as a model's key, or undefined. */
export function keyRefusal(name: string, env: Env): string | undefined {
  if (name.toUpperCase().startsWith('TOOLCHAIN_')) return `${name} is one of the engine's own variables, which are never sent to a model endpoint`;
  const declared = env(MODEL_KEYS_VARIABLE);
  if (declared !== undefined && declared.trim() !== '') {
    const names = declared.split(',').map((s) => s.trim());
    return names.includes(name) ? undefined : `${name} is not declared for models: ${MODEL_KEYS_VARIABLE} lists ${names.filter((n) => n !== '').join(', ')}`;
  }
  return /_API_KEY$/.test(name) ? undefined : `${name} is not declared for models: without ${MODEL_KEYS_VARIABLE}, only variables named …_API_KEY are; list it in ${MODEL_KEYS_VARIABLE}`;
}

/** The key for `Authorization: Bearer`, read from `envName` once the name is allowed. */
export function modelKey(step: string, envName: string | undefined, env: Env): string | undefined {
  if (envName === undefined) return undefined;
  const why = keyRefusal(envName, env);
  if (why !== undefined) throw new ModelError('MODEL_KEY_REFUSED', `step '${step}' may not read its API key from ${envName}: ${why}`);
  const key = env(envName);
  if (key === undefined || key === '') throw new ModelError('MODEL_AUTH', `step '${step}' reads its API key from the environment variable ${envName}, which is not set`);
  return key;
}

/** TOOLCHAIN_MODEL_ALLOW, parsed; an entry that does not read refuses every request (MODEL_ADDRESS_REFUSED names it). */
export function modelAllowList(env: Env): readonly AllowEntry[] {
  try {
    return parseAllowList(env(MODEL_ALLOW_VARIABLE));
  } catch (error) {
    throw new ModelError('MODEL_ADDRESS_REFUSED', (error as Error).message.replace('TOOLCHAIN_HTTP_ALLOW', MODEL_ALLOW_VARIABLE));
  }
}
