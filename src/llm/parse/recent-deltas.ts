import { ARGS_KEY, ARGS_WORDS, keyBefore, NAME_KEY, NAME_WORDS } from './scan-json.js';
import { CLOSING_TAG, MARKER_TOKEN } from './stream-chars.js';

// The last deltas of a streamed message, for the few characters before a colon (where a JSON
// key stands) or before a `>` or `]` (the tag or token it closes). The stream's unsettled text
// grows by concatenation, and searching it would copy all of it on every such character; the
// last deltas are looked through instead, most often without joining them.

/** How many of the last deltas are kept. */
const RECENT = 64;
/** How far before a colon its key is looked for (`"tool_name"` and a space). */
const KEY_REACH = 14;
/** The last two characters of each key word, as one number: a word before a colon that ends otherwise is no key. */
const lastTwo = (words: readonly string[]): Set<number> => new Set(words.map((w) => (w.charCodeAt(w.length - 2) << 16) | w.charCodeAt(w.length - 1)));
const NAME_ENDS = lastTwo(NAME_WORDS);
const ARGS_ENDS = lastTwo(ARGS_WORDS);

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

  /** True when a `]` in the newest delta may end a call: one that ends a marker token does not. */
  closesList(delta: string): boolean {
    const near = this.text(delta.length + 16);
    const base = near.length - delta.length;
    for (let sq = delta.indexOf(']'); sq >= 0; sq = delta.indexOf(']', sq + 1)) {
      if (!MARKER_TOKEN.test(near.slice(Math.max(0, base + sq - 15), base + sq + 1))) return true;
    }
    return false;
  }

  /** True when a backtick in the newest delta is the third (or a later one) of a run: a fence, not inline code. */
  completesFence(delta: string): boolean {
    const near = this.text(delta.length + 2);
    const base = near.length - delta.length;
    for (let bt = delta.indexOf('`'); bt >= 0; bt = delta.indexOf('`', bt + 1)) {
      if (near.charCodeAt(base + bt - 1) === 0x60 && near.charCodeAt(base + bt - 2) === 0x60) return true;
    }
    return false;
  }

  /** True when a `>` in the newest delta ends a closing tag or an end token. */
  closesTag(delta: string): boolean {
    const near = this.text(delta.length + 40);
    const base = near.length - delta.length;
    for (let gt = delta.indexOf('>'); gt >= 0; gt = delta.indexOf('>', gt + 1)) {
      const end = base + gt;
      const lt = Math.max(near.lastIndexOf('<', end), near.lastIndexOf('\uff5c', end - 1) - 24);
      if (lt >= 0 && CLOSING_TAG.test(near.slice(Math.max(0, lt), end + 1))) return true;
    }
    return false;
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
   * missing: keys end in me, ol or on (name, tool, function), or ts, gs, ut or on (arguments,
   * args, parameters, input). Looks at a few characters: prose has many colons, and joining the
   * deltas to read the whole word costs more.
   */
  private mayBeKey(i: number, keys: number): boolean {
    let back = 1;
    let c = this.charBefore(i, back);
    // Within a key's reach: a colon after a long run of spaces has no key before it (and costs no more).
    while ((c === 0x20 || (c >= 0x09 && c <= 0x0d)) && back < KEY_REACH) c = this.charBefore(i, ++back);
    if (c === 0x22 || c === 0x27 || c === 0x201c || c === 0x201d) c = this.charBefore(i, ++back);
    // Anything that is no ASCII character (a rarer space, say) is left to keyBefore.
    if (c > 0x7f && c !== 0xff1a) return true;
    const end = (this.charBefore(i, back + 1) << 16) | c;
    return ((keys & NAME_KEY) === 0 && NAME_ENDS.has(end)) || ((keys & ARGS_KEY) === 0 && ARGS_ENDS.has(end));
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
