// `toolchain/plugin`: what a plugin's handler modules use — the types of the handler contract,
// and the few helpers of plugin-api.ts, which the engine hands a plugin's code at run time
// (whatever folder the plugin was copied to). Type imports cost a handler nothing at run time.

export type { ToolContext, ToolDefinition, ToolHandler, ToolProgress } from './registry/types.js';
export type { JsonSchema, JsonValue } from './common/json.js';
export { compileJsonPath, HandlerError, JsonPathSyntaxError, type CompiledJsonPath } from './plugins/plugin-api.js';
export { ALLOW_VARIABLE, NetError, parseAllowList, readLimited, sendRequest, tooLarge, type AllowEntry, type RequestSpec } from './plugins/plugin-api.js';
