// The engine's HTTP exchange under its address policy, which OpenAPI operations share: handed to
// plugins by the engine that loads them (toolchain/plugin).
export { readLimited, sendRequest, tooLarge, type RequestSpec } from 'toolchain/plugin';
