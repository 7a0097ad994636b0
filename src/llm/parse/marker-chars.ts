// Which formats a text can concern, decided by the characters their markers start with (a
// format's `markers`). Each character is searched for once per text, natively, and only when a
// format asks for it: prose with no `<`, `[` or `▁` is searched a few times in all instead of once
// per format, and a one-character search stays fast on a CJK text where a whole marker's does not
// (measured on 4 KB of the benchmark's prose: 0.09 µs for `<`, 0.16 µs for `<tool_call>`, the 24
// markers of the built-in formats 3.9 µs against 0.8 µs for their 9 characters).

export class MarkerChars {
  /** Per character code: whether the text holds it, once looked for. */
  private readonly present = new Map<number, boolean>();

  constructor(private readonly text: string) {}

  /** True when the text holds one of `chars`, or when a format declares none (it is always asked). */
  any(chars: string | undefined): boolean {
    if (chars === undefined) return true;
    for (let i = 0; i < chars.length; i++) {
      const code = chars.charCodeAt(i);
      let here = this.present.get(code);
      if (here === undefined) {
        here = this.text.indexOf(chars.charAt(i)) >= 0;
        this.present.set(code, here);
      }
      if (here) return true;
    }
    return false;
  }
}
