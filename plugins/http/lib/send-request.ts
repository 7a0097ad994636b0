// One HTTP exchange under the address policy: the engine's own, shared with OpenAPI operations.
export { sendRequest, type RequestSpec } from '../../../src/net/send-request.js';
export { readLimited, tooLarge } from '../../../src/net/read-limited.js';
