/**
 * Sets an own member even when it is named `__proto__`, where plain assignment would replace the
 * object's prototype instead (a chain's `input_map: { __proto__: … }` must not do that).
 */
export function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
