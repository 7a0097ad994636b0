// The first sentence of a description, for one-line listings (`list tools`). A period ends a
// sentence only where a new one starts after it: not inside brackets or quotes, not after an
// abbreviation such as "e.g." or "i.e.", not inside a number, a version or a file name ("1.5", "v2.1").

const ABBREVIATIONS = /(?:^|[\s(])(?:e\.g|i\.e|etc|vs|cf|approx|incl|esp|no|nos|fig|ca|resp|Mr|Mrs|Ms|Dr|St)\.$/i;
const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };

export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const open: string[] = [];
  let quoted = false;
  for (let i = 0; i < flat.length; i++) {
    const c = flat[i]!;
    if (c in OPENERS) open.push(OPENERS[c]!);
    else if (c === open.at(-1)) open.pop();
    else if (c === '"') quoted = !quoted;
    else if ((c === '.' || c === '!' || c === '?') && open.length === 0 && !quoted && flat[i + 1] === ' ') {
      if (c === '.' && ABBREVIATIONS.test(flat.slice(Math.max(0, i - 8), i + 1))) continue;
      return flat.slice(0, i + 1);
    }
  }
  return flat;
}
