// The address policy is the engine's (OpenAPI operations use the same one): one rule, one place.
export { ALLOW_VARIABLE, parseAllowList, refusal, type AllowEntry } from '../../../src/net/address-policy.js';
