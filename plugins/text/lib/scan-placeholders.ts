// Finds `{{ … }}` placeholders in one left-to-right pass. A regular expression did this before and
// backtracked cubically on `{{` followed by thousands of spaces (19 s for 4,000), on the main
// thread where no timeout can stop it; this scanner looks at each character a bounded number of
// times, so its cost is linear in the template's length whatever the text.
//
// A placeholder is `{{`, then text without `{` or `}`, then `}}`: the text between is the name
// and its filters (`name | upper | trim`). Anything else is literal text, as it always was:
// `{{ a {{ b }}` renders `{{ a ` literally and fills `b`.

export type Piece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'placeholder'; readonly body: string; readonly at: number };

export function scanPlaceholders(template: string): Piece[] {
  const pieces: Piece[] = [];
  let literalFrom = 0;
  let search = 0;
  for (;;) {
    const open = template.indexOf('{{', search);
    if (open < 0) break;
    let j = open + 2;
    while (j < template.length) {
      const ch = template.charCodeAt(j);
      if (ch === 0x7b /* { */ || ch === 0x7d /* } */) break;
      j++;
    }
    if (j < template.length && template.charCodeAt(j) === 0x7d && template.charCodeAt(j + 1) === 0x7d) {
      if (open > literalFrom) pieces.push({ kind: 'text', text: template.slice(literalFrom, open) });
      pieces.push({ kind: 'placeholder', body: template.slice(open + 2, j), at: open });
      literalFrom = j + 2;
      search = j + 2;
      continue;
    }
    if (j >= template.length) break;
    // No placeholder starts at `open`. The only later start before `j` is `j - 1` (when it is the
    // `{` right after `{{`, as in `{{{ a }}`); everything in between is free of braces.
    search = Math.max(open + 1, j - 1);
  }
  if (literalFrom < template.length) pieces.push({ kind: 'text', text: template.slice(literalFrom) });
  return pieces;
}
