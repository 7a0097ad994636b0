// `toolchain/plugin`: the types a plugin's handler modules use, and nothing else — a type-only
// entry, so `import type { ToolHandler } from 'toolchain/plugin'` costs a handler nothing at run
// time and plugin folders stop copying these declarations.

export type { ToolContext, ToolDefinition, ToolHandler, ToolProgress } from './registry/types.js';
export type { JsonSchema, JsonValue } from './common/json.js';
