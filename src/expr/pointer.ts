// RFC 6901 pointers for the places inside a value where a path or template sits. Pointers are
// relative: the caller joins them onto the pointer of the value itself.

/** Escapes one reference token (`~` → `~0`, `/` → `~1`, in that order as RFC 6901 requires). */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

export function childPointer(parent: string, token: string | number): string {
  return `${parent}/${escapePointerToken(String(token))}`;
}
