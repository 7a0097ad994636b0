import type { JsonSchema } from '../../common/json.js';
import type { Callable, CallableSource } from './callables.js';
import { objectSchema, selectCallables, type ExportOptions } from './select-callables.js';
import { toStrictSchema } from './strict-schema.js';

// OpenAI function definitions (`tools` of /v1/chat/completions). With `strict: true` each schema
// is converted to strict mode where that is faithful (strict-schema.ts) and marked `strict: true`;
// the others go out as written with `strict: false`, so the caller can see which were not.

export interface OpenAIExportOptions extends ExportOptions {
  /** Convert schemas to strict mode where that is faithful (default false). */
  readonly strict?: boolean;
}

export interface OpenAIFunction {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly strict?: boolean;
}

export interface OpenAITool {
  readonly type: 'function';
  readonly function: OpenAIFunction;
}

export function toOpenAITools(source: CallableSource | readonly Callable[], options: OpenAIExportOptions = {}): OpenAITool[] {
  return selectCallables(source, options).map((c) => {
    const parameters = objectSchema(c.parameters);
    if (options.strict !== true) return { type: 'function', function: { name: c.exportedName, description: c.description, parameters } };
    // Converted from the schema as written: objectSchema's added `properties: {}` would make a free-form object look closed.
    const converted = toStrictSchema(c.parameters);
    const schema = converted.strict ? converted.schema : parameters;
    return { type: 'function', function: { name: c.exportedName, description: c.description, parameters: schema, strict: converted.strict } };
  });
}
