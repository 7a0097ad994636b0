import { ARGS_KEY, keyBefore, NAME_KEY } from './scan-json.js';

// The last deltas of a streamed message, for the few characters before a colon (where a JSON
// key stands) or before a `>` or `]` (the tag or token it closes). The stream's unsettled text
// grows by concatenation, and searching it would copy all of it on every such character; the
// last deltas are looked through instead, most often without joining them.

/** How many of the last deltas are kept. */
const RECENT = 64;
/** How far before a colon its key is looked for (`"tool_name"` and a space). */
const KEY_REACH = 14;

export class RecentDeltas {
  private readonly deltas: string[] = [];
  private count = 0;

  add(delta: string): void {
    this.deltas[this.count++ % RECENT] = delta;
  }

  /** The last deltas joined, back to at least `length` characters before the newest one's end. */
  text(length: number): string {
    let text = '';
    for (let k = this.count - 1; k >= Math.max(0, this.count - RECENT) && text.length < length; k--) text = this.deltas[k % RECENT]! + text;
    return text;
  }

  /** `have` with the keys (NAME_KEY, ARGS_KEY) that stand before the colons of the newest delta. */
  colonKeys(delta: string, have: number): number {
    let keys = have;
    let near: string | undefined;
    for (let i = 0; i < delta.length; i++) {
      const c = delta.charCodeAt(i);
      if ((c !== 0x3a && c !== 0xff1a) || !this.mayBeKey(i, keys)) continue;
      if (i >= KEY_REACH) keys |= keyBefore(delta, i);
      else {
        near ??= this.text(KEY_REACH + delta.length);
        keys |= keyBefore(near, near.length - delta.length + i);
      }
    }
    return keys;
  }

  /**
   * False when the word before the colon at `i` of the newest delta cannot end a key still
   * missing: keys end in e, l or n (name, tool, function), or s, t or n (arguments, args,
   * parameters, input). Looks at a character or two: prose has many colons.
   */
  private mayBeKey(i: number, keys: number): boolean {
    let back = 1;
    let c = this.charBefore(i, back);
    // Within a key's reach: a colon after a long run of spaces has no key before it (and costs no more).
    while ((c === 0x20 || (c >= 0x09 && c <= 0x0d)) && back < KEY_REACH) c = this.charBefore(i, ++back);
    if (c === 0x22 || c === 0x27 || c === 0x201c || c === 0x201d) c = this.charBefore(i, ++back);
    const name = (keys & NAME_KEY) === 0 && (c === 0x65 || c === 0x6c || c === 0x6e);
    const args = (keys & ARGS_KEY) === 0 && (c === 0x73 || c === 0x74 || c === 0x6e);
    // Anything else that is no ASCII letter (a rarer space, say) is left to keyBefore.
    return name || args || (c > 0x7f && c !== 0xff1a);
  }

  /** The character `back` places before position `i` of the newest delta (-1 past the kept deltas). */
  private charBefore(i: number, back: number): number {
    let k = this.count - 1;
    let pos = i - back;
    while (pos < 0) {
      if (--k < Math.max(0, this.count - RECENT)) return -1;
      pos += this.deltas[k % RECENT]!.length;
    }
    return this.deltas[k % RECENT]!.charCodeAt(pos);
  }
}
