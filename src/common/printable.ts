// Text from files, tools and models ends up in diagnostics printed to a terminal. Control
// characters there are instructions to the terminal, not text: an ANSI/OSC escape can recolour,
// retitle or hide output, rewrite what is on screen, or (OSC 8, OSC 52) plant links and the
// clipboard; NUL truncates in some viewers; bidirectional overrides (the "Trojan Source" trick)
// make text read differently from what it is; a newline splits one diagnostic into two. Each such
// character is shown as a visible escape instead, so a diagnostic is always one inert line.

// C0 controls (tab included), DEL, C1 controls, bidirectional marks, embeddings, overrides and
// isolates, and the Unicode line and paragraph separators.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every control, bidi and line-separator character written as a visible escape. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (ch) => NAMED[ch] ?? `\\u{${ch.codePointAt(0)!.toString(16).padStart(4, '0')}}`);
}

/** A block of lines the CLI made itself: each line made printable, its own line breaks kept. */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}

// JSON.stringify already writes C0 controls as \u escapes; these it leaves as they are.
const UNESCAPED_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * `value` as JSON for a terminal: the same JSON (a parser reads back the same value), with DEL, C1
 * controls, bidi characters and line separators written as `\uXXXX`, which JSON.stringify leaves
 * raw. Outside strings JSON has none of these characters, so only string contents change.
 */
export function printableJson(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? 'null').replace(UNESCAPED_IN_JSON, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
