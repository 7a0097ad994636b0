import type { ToolCallFormat } from './format.js';

// Which formats a text can concern, decided by the characters their markers start with (a
// format's `markers`). Each character is searched for once per text, natively, and only when a
// format asks for it: prose with no `<`, `[` or `▁` is searched a few times in all instead of once
// per format, and a one-character search stays fast on a CJK text where a whole marker's does not
// (the llm-parse bench: the built-in formats' markers share a few characters).

/**
 * For one list of formats: the distinct marker characters, and for each format a bit set of its
 * own (-1: always asked). Bits rather than index lists: a stream reads short texts many times,
 * and asking twenty formats through lists cost a read more than its searches.
 */
interface Plan {
  readonly chars: readonly string[];
  readonly masks: readonly number[];
}

/** Characters past this many (formats of your own) are not told apart: their formats are always asked. */
const BITS = 30;

// Derived from a list of formats, which is never changed in place (the registry replaces its list
// when a format is added): computed once per list instead of once per text.
const plans = new WeakMap<readonly ToolCallFormat[], Plan>();

function planFor(formats: readonly ToolCallFormat[]): Plan {
  let plan = plans.get(formats);
  if (plan === undefined) {
    const chars: string[] = [];
    const masks = formats.map((format) => {
      if (format.markers === undefined) return -1;
      let mask = 0;
      for (const c of format.markers) {
        if (!chars.includes(c)) chars.push(c);
        const bit = chars.indexOf(c);
        if (bit >= BITS) return -1;
        mask |= 1 << bit;
      }
      return mask;
    });
    plan = { chars, masks };
    plans.set(formats, plan);
  }
  return plan;
}

export class MarkerChars {
  private readonly plan: Plan;
  /** The characters looked for so far (bits of `plan.chars`), and those among them in the text. */
  private looked = 0;
  private present = 0;

  constructor(
    private readonly text: string,
    formats: readonly ToolCallFormat[],
  ) {
    this.plan = planFor(formats);
  }

  /** True when the text holds one of the characters of the format at `index` in the list, or it declares none. */
  any(index: number): boolean {
    const mask = this.plan.masks[index] ?? -1;
    if (mask === -1 || (mask & this.present) !== 0) return true;
    for (let missing = mask & ~this.looked; missing !== 0; ) {
      const bit = missing & -missing;
      missing ^= bit;
      this.looked |= bit;
      if (this.text.indexOf(this.plan.chars[31 - Math.clz32(bit)]!) >= 0) {
        this.present |= bit;
        return true;
      }
    }
    return false;
  }
}
