import type { ErrorObject } from 'ajv';
import * as generated from './validators.generated.js';

// The chain and plugin schemas (and the JSON Schema meta-schema) compiled ahead of time (scripts/gen-validators.js): checking a
// file costs no compile at start-up. Same options as a runtime Ajv would use: allErrors, verbose.

export interface SchemaValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

export const validateChainFile = (generated as { validateChain: SchemaValidator }).validateChain;
export const validatePluginManifest = (generated as { validatePlugin: SchemaValidator }).validatePlugin;
/** The draft-07 meta-schema: is this a JSON Schema at all? */
export const validateJsonSchema = (generated as { validateJsonSchema: SchemaValidator }).validateJsonSchema;
/** The draft-07 meta-schema for one schema object: its subschemas need only be objects or booleans. */
export const validateJsonSchemaNode = (generated as { validateJsonSchemaNode: SchemaValidator }).validateJsonSchemaNode;
