// Outbound HTTP under the address policy: what the http plugin and OpenAPI operations share.
export { ALLOW_VARIABLE, parseAllowList, refusal, type AllowEntry } from './address-policy.js';
export { guardedLookup, RefusedAddress } from './guarded-lookup.js';
export { NetError } from './net-error.js';
export { declaredTooLarge, readLimited, tooLarge } from './read-limited.js';
export { portOf, sendRequest, type RequestSpec } from './send-request.js';
