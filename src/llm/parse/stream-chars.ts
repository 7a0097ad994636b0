// What the tool-call stream notices in each delta, before it decides whether to read: which
// characters could open or close a call of a built-in format (where the first object still open
// starts is open-braces.ts). Split from tool-call-stream.ts, which keeps the state between deltas.

// The characters the stream cares about, by kind: what can end a call, what a built-in format's
// opening marker holds (besides `{`), colons (a JSON key) and opening braces. A table lookup per
// character is the cheapest way to look at every character once.
export const TRIGGER = 1;
export const MARKER = 2;
export const COLON = 4;
/** A `>`: it ends a call only when it ends a closing tag or an end token (built-in formats). */
export const ANGLE = 8;
/**
 * A backtick: it ends a call only when it completes the ```` ``` ```` that closes a ```` ```tool_code ````
 * block (Python calls are read when their block closes). A JSON fence's objects are read as each
 * one closes (its `}`), and its opening and closing fence complete nothing.
 */
export const BACKTICK = 16;
/** A `]`: it ends a call unless it ends a marker token (`[TOOL_CALLS]`, `[ARGS]`, `[CALL_ID]`). */
export const SQUARE = 32;
/** A `_`: the stream looks for a `tool_use` around it (tool-use-watch.ts). */
export const UNDERSCORE = 64;
/** A `{` or `｛`: where an object may open (the stream keeps track of the first one still open). */
export const OPEN_BRACE = 128;
/** The block whose closing ```` ``` ```` completes calls (pythonic.ts reads a block still open only when it ends in a call). */
export const CODE_BLOCK = '```tool_code';
/** A marker token a `]` ends. */
export const MARKER_TOKEN = /\[[A-Z_]+\]$/;
/**
 * A message that starts like this is no Llama call list (`[`), no Functionary recipient (a bare
 * name on its own line) and no hidden reasoning (`<think>`): the formats that look at the start
 * of a message have nothing to read there, so the start needs no read of its own.
 */
export const PROSE_START = /^\s*(?:[^\s[<A-Za-z_]|[A-Za-z_][\w.-]*[^\w.\n-])/;
/**
 * The tag a `>` closes may end a call or a block of the built-in formats: `</tool_call>`,
 * `</function>`, `</invoke>` (`</ns:invoke>`, `</｜DSML｜invoke>`), `</function_calls>`, `</tool>`,
 * `</args>`, `</TOOLCALL>`, `</think>`, `</response>`…, and the end tokens `<|call|>`, `…end|>`,
 * `<|eom_id|>`, `<｜tool▁call▁end｜>`, `<end_function_call>`. A tag inside a call (`</parameter>`, `</arg_value>`, `</tool_name>`) ends
 * none: reading at it found the call unfinished, at a cost near that of the read that finds it.
 */
export const CLOSING_TAG = /^<\/(?:[A-Za-z][\w-]*:|\uff5cDSML\uff5c)?(?:tool_call|function|invoke|function_calls|tool|args|arguments|toolcall|think|thinking|function_call|tools|response|json|xml)\s*>$|(?:end|call|_id)[|\uff5c]>$|^<end_function_call>$/i;
/**
 * Closing tags, end tokens and spaces (`\n</tool_call>`, `<|call|>`), then at most words with no
 * marker character, brace, bracket or parenthesis: no call opens in it, so reading it finds
 * nothing; only the stream's calm comes back after the calls.
 */
export const CLOSERS_ONLY = /^(?:\s|<\/[^<>]{1,64}>|<[|\uff5c][^<>]{0,64}?(?:end|_id)[|\uff5c]>|<\|call\|>)+[^<>[\]{}()`=\uff5b\uff5d\uff5c\u2581]*$/i;
const KINDS = new Uint8Array(0x10000);
for (const c of '})\uff5d') KINDS[c.charCodeAt(0)] = TRIGGER;
KINDS[0x5d] = SQUARE;
for (const c of '<[=\uff5c\u2581') KINDS[c.charCodeAt(0)] = MARKER;
for (const c of ':\uff1a') KINDS[c.charCodeAt(0)] = COLON;
KINDS[0x60] = BACKTICK | MARKER; // ` opens fences, and closes a tool_code block
KINDS[0x3e] = ANGLE | MARKER; // > closes tags and opens Functionary's >>>
KINDS[0xff5b] = OPEN_BRACE;
KINDS[0x7b] = OPEN_BRACE;
KINDS[0x5f] = UNDERSCORE;

const ANY_NOTABLE = /[{}\])\uff5d<[=\uff5c\u2581:\uff1a`>\uff5b_]/;

/**
 * Which kinds of notable characters `text` holds (a bit set). A delta is a few characters: the
 * table is cheaper than calling a regular expression (the llm-parse bench's streamed deltas).
 * A long text is first searched natively, since most hold none.
 */
export function notable(text: string): number {
  if (text.length > 64 && !ANY_NOTABLE.test(text)) return 0;
  let kinds = 0;
  for (let i = 0; i < text.length; i++) kinds |= KINDS[text.charCodeAt(i)]!;
  return kinds;
}

/** The last character of `text` that a marker holds (0 for none): a `>` ends a tag, a backtick or a `[` may begin one. */
export function lastMarkerChar(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if ((KINDS[c]! & MARKER) !== 0) return c;
  }
  return 0;
}
