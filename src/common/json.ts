// JSON shapes shared by every layer: the type of a JSON Schema, a JSON value, and the one shape test

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON Schema object, as it appears in chain inputs, tool manifests and exported definitions. */
export type JsonSchema = { readonly [key: string]: unknown };

/** A value that JSON can carry. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };
