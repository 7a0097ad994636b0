// The engine's address policy (toolchain/plugin), which OpenAPI operations share.
export { ALLOW_VARIABLE, parseAllowList, type AllowEntry } from 'toolchain/plugin';
