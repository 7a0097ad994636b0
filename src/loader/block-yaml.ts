import { childPointer } from '../common/json-pointer.js';
import { FORBIDDEN_KEYS } from './safe-value.js';
import { BAIL, blockText, keyOf, plainValue, quoted, startsPlain } from './yaml-scalar.js';
import { readFlow } from './yaml-flow.js';

// Chains and manifests are written in a small part of YAML: block mappings and sequences,
// one-line scalars, `|` and `>` blocks, one-line flow collections, comments. The yaml library
// reads all of YAML at about a megabyte a second and builds a syntax tree first; this reader
// reads that part in one pass straight into plain values and the offsets of the source map, an
// order of magnitude faster. Anything else — anchors, tags, multi-line plain or quoted scalars,
// a second document, tabs, duplicate or forbidden keys, any syntax error — makes it give up
// (BAIL) and the yaml library reads the file, exactly as before: so every diagnostic still comes
// from yaml, and this reader only has to be exact on what it accepts (test/block-yaml.test.ts
// checks it against yaml on every YAML file in the repository and on generated documents).

export interface BlockYaml {
  readonly value: unknown;
  /** Pointer → offset where the value starts (as document-walk.ts records it from yaml's nodes). */
  readonly values: Map<string, number>;
  /** Pointer → offset where the member's key starts. */
  readonly keys: Map<string, number>;
  /** Offsets where lines start: 0, then one after each line break but the last character. */
  readonly lineStarts: number[];
}

/** Control characters, a BOM or a carriage return anywhere: yaml's handling of them is left to yaml. */
const UNUSUAL = /[\x00-\x09\x0b-\x1f\x7f-\x84\x86-\x9f\ufeff\ufffe\uffff]/;
const SPACE = 0x20;
const NEWLINE = 0x0a;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;
/** yaml refuses implicit keys longer than 1024 characters; well below that is read here. */
const LONGEST_KEY = 1000;

/** The document's value and source offsets, or undefined when the text is not in the subset. */
export function readBlockYaml(text: string, maxDepth: number): BlockYaml | undefined {
  if (UNUSUAL.test(text)) return undefined;
  try {
    return new Reader(text, maxDepth).document();
  } catch (error) {
    if (error === BAIL) return undefined;
    throw error;
  }
}

class Reader {
  readonly values = new Map<string, number>();
  readonly keys = new Map<string, number>();
  readonly lineStarts: number[] = [0];
  /** Half the depth limit: the yaml path's own depth estimate may count a level more per column. */
  readonly maxDepth: number;
  /** The line being read. */
  private line = 0;
  /** Where the content of the line found by seek() starts. */
  private at = 0;

  constructor(
    private readonly text: string,
    maxDepth: number,
  ) {
    this.maxDepth = maxDepth >> 1;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', nl + 1)) this.lineStarts.push(nl + 1);
  }

  document(): BlockYaml {
    const indent = this.seek();
    if (indent < 0) throw BAIL; // an empty document: rare, and left to yaml
    const root = this.at;
    const value = this.block(indent, '', 1);
    if (this.seek() >= 0) throw BAIL; // content left over: an indentation error
    this.values.set('', root);
    // As yaml records them: no line start at the very end of the text.
    const { lineStarts, text } = this;
    if (lineStarts.length > 1 && lineStarts[lineStarts.length - 1] === text.length) lineStarts.pop();
    return { value, values: this.values, keys: this.keys, lineStarts };
  }

  private lineEnd(line: number): number {
    const next = this.lineStarts[line + 1];
    return next === undefined ? this.text.length : next - 1;
  }

  /** Moves to the next line with content (not blank, not a comment) and returns its indentation, or -1 at the end. */
  private seek(): number {
    const { text, lineStarts } = this;
    for (; this.line < lineStarts.length; this.line++) {
      const start = lineStarts[this.line]!;
      let i = start;
      while (text.charCodeAt(i) === SPACE) i++;
      const c = text.charCodeAt(i);
      if (c === NEWLINE || c === HASH || i >= text.length) continue;
      // A document marker or a directive: only yaml reads those.
      if (i === start && (c === 0x25 || ((c === DASH || c === 0x2e) && /^(?:---|\.\.\.)(?:[ \n]|$)/.test(text.slice(i, i + 4))))) throw BAIL;
      this.at = i;
      return i - start;
    }
    return -1;
  }

  /** A block collection whose first entry starts at `this.at`, in column `indent`. */
  private block(indent: number, pointer: string, depth: number): unknown {
    if (depth > this.maxDepth) throw BAIL;
    return this.isEntry(this.at) ? this.sequence(indent, pointer, depth) : this.mapping(indent, pointer, depth);
  }

  /** `-` followed by a space or a line end: a sequence entry. */
  private isEntry(at: number): boolean {
    const next = this.text.charCodeAt(at + 1);
    return this.text.charCodeAt(at) === DASH && (next === SPACE || next === NEWLINE || at + 1 >= this.text.length);
  }

  private sequence(indent: number, pointer: string, depth: number): unknown[] {
    const items: unknown[] = [];
    for (;;) {
      items.push(this.afterIndicator(this.at + 1, indent, childPointer(pointer, items.length), depth, true));
      const next = this.seek();
      if (next < indent) break;
      if (next > indent) throw BAIL;
      // A key in the sequence's column ends it (a mapping's value may sit in the key's column).
      if (!this.isEntry(this.at)) break;
    }
    return items;
  }

  private mapping(indent: number, pointer: string, depth: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    for (;;) {
      const keyAt = this.at;
      const [key, colon] = this.key(keyAt);
      if (FORBIDDEN_KEYS.has(key) || Object.hasOwn(map, key)) throw BAIL; // yaml's path reports these
      const child = childPointer(pointer, key);
      this.keys.set(child, keyAt);
      map[key] = this.afterIndicator(colon + 1, indent, child, depth, false);
      const next = this.seek();
      if (next < indent) break;
      if (next > indent) throw BAIL;
      if (this.isEntry(this.at)) break; // the parent decides whether a `-` here is valid
    }
    return map;
  }

  /** A key at `at` and the offset of its `:` (which a space or a line end follows). */
  private key(at: number): [string, number] {
    const { text } = this;
    const c = text.charCodeAt(at);
    if (c === 0x22 || c === 0x27) {
      const [key, end] = quoted(text, at);
      if (text.charCodeAt(end) !== COLON || !this.spaceOrEnd(end + 1)) throw BAIL;
      return [key, end];
    }
    if (!this.plainStart(at)) throw BAIL;
    const end = this.lineEnd(this.line);
    for (let i = at + 1; i < end && i - at <= LONGEST_KEY; i++) {
      const d = text.charCodeAt(i);
      if (d === HASH && text.charCodeAt(i - 1) === SPACE) break;
      if (d === COLON && this.spaceOrEnd(i + 1)) {
        if (text.charCodeAt(i - 1) === SPACE) throw BAIL; // `key :`: left to yaml
        return [keyOf(plainValue(text.slice(at, i))), i];
      }
    }
    throw BAIL;
  }

  private spaceOrEnd(at: number): boolean {
    const c = this.text.charCodeAt(at);
    return c === SPACE || c === NEWLINE || at >= this.text.length;
  }

  private plainStart(at: number): boolean {
    return startsPlain(this.text, at, false);
  }

  /**
   * The node after a `key:` or a `-` (the indicator ends at `from`): on the same line, on the lines
   * below (indented deeper than `indent`, the column of the collection the indicator belongs
   * to), or nothing (null).
   */
  private afterIndicator(from: number, indent: number, pointer: string, depth: number, inSequence: boolean): unknown {
    const { text } = this;
    let at = from;
    while (text.charCodeAt(at) === SPACE) at++;
    const c = text.charCodeAt(at);
    if (c === NEWLINE || at >= text.length || (c === HASH && at > from)) {
      this.line++;
      const next = this.seek();
      if (next > indent || (next === indent && !inSequence && this.isEntry(this.at))) {
        this.values.set(pointer, this.at);
        return this.block(next, pointer, depth + 1);
      }
      this.values.set(pointer, at); // where yaml puts an empty node: after the spaces
      return null;
    }
    this.values.set(pointer, at);
    if (c === 0x7c || c === 0x3e) return this.blockScalar(at, indent);
    if (c === 0x5b || c === 0x7b) {
      const [value, end] = readFlow(this.text, at, pointer, depth + 1, this);
      this.endOfLine(end);
      return value;
    }
    if (c === 0x22 || c === 0x27) {
      const [value, end] = quoted(text, at);
      if (inSequence && text.charCodeAt(end) === COLON) return this.compactMapping(at, pointer, depth);
      this.endOfLine(end);
      return value;
    }
    if (!this.plainStart(at)) throw BAIL;
    const end = this.lineEnd(this.line);
    let last = at;
    for (let i = at + 1; i < end; i++) {
      const d = text.charCodeAt(i);
      if (d === HASH && text.charCodeAt(i - 1) === SPACE) break;
      if (d === COLON && this.spaceOrEnd(i + 1)) {
        // `- key: value`: a mapping in the entry; `key: a: b` is an error yaml reports.
        if (inSequence) return this.compactMapping(at, pointer, depth);
        throw BAIL;
      }
      if (d !== SPACE) last = i;
    }
    this.line++;
    return plainValue(text.slice(at, last + 1));
  }

  /** `- key: value`: a mapping whose keys sit in the column of the first one. */
  private compactMapping(at: number, pointer: string, depth: number): Record<string, unknown> {
    if (depth + 1 > this.maxDepth) throw BAIL;
    this.at = at;
    return this.mapping(at - this.lineStarts[this.line]!, pointer, depth + 1);
  }

  /** After a scalar or a flow collection: only spaces and a comment may follow on the line. */
  private endOfLine(from: number): void {
    const { text } = this;
    let i = from;
    while (text.charCodeAt(i) === SPACE) i++;
    const c = text.charCodeAt(i);
    if (!(c === NEWLINE || i >= text.length || (c === HASH && i > from))) throw BAIL;
    this.line++;
  }

  /** `|` or `>`, with `-` or nothing after it; its lines are those indented deeper than `indent`. */
  private blockScalar(at: number, indent: number): string {
    const { text } = this;
    const folded = text.charCodeAt(at) === 0x3e;
    const strip = text.charCodeAt(at + 1) === DASH;
    this.endOfLine(at + (strip ? 2 : 1)); // `+` and indentation digits are left to yaml
    const lines: string[] = [];
    let contentIndent = -1;
    let longestBlank = 0;
    for (; this.line < this.lineStarts.length; this.line++) {
      const start = this.lineStarts[this.line]!;
      const end = this.lineEnd(this.line);
      let i = start;
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      if (i === end) {
        // Blank lines longer than the indentation hold spaces that are content: left to yaml.
        longestBlank = Math.max(longestBlank, i - start);
        lines.push('');
        continue;
      }
      const spaces = i - start;
      if (contentIndent < 0) {
        if (spaces <= indent) throw BAIL; // an empty block scalar
        contentIndent = spaces;
      } else if (spaces < contentIndent) break;
      if (folded && spaces > contentIndent) throw BAIL; // more-indented lines fold differently
      lines.push(text.slice(start + contentIndent, end));
    }
    if (contentIndent < 0 || longestBlank > contentIndent) throw BAIL;
    return blockText(lines, folded, strip);
  }
}
