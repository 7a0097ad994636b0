/**
 * Sets an own, enumerable, writable member, even when it is named `__proto__`: plain assignment
 * of that name replaces the object's prototype instead (a chain's `input_map: { __proto__: … }`,
 * a model's arguments or a tool's result must not do that). Other names are assigned, which is
 * the same for the plain objects this is used on and keeps their fast shape.
 */
export function defineOwn(target: object, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[key] = value;
}
