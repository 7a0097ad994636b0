import { describeKind, ToolchainError } from '../../common/errors.js';
import { allBuiltIn } from './format-registry.js';
import { checkParseOptions, type ParseOptions, type ParseSettings } from './parse-options.js';
import { RecentDeltas } from './recent-deltas.js';
import { settlePoint } from './settle-point.js';
import { ToolUseWatch } from './tool-use-watch.js';
import { ARGS_KEY, jsonKeys, NAME_KEY } from './scan-json.js';
import { readFormats, type FormatsRead } from './read-formats.js';
import { OpenBraces } from './open-braces.js';
import { ANGLE, BACKTICK, CLOSERS_ONLY, CODE_BLOCK, COLON, lastMarkerChar, MARKER, notable, OPEN_BRACE, PROSE_START, SQUARE, TRIGGER, UNDERSCORE } from './stream-chars.js';
import { StreamFound } from './stream-found.js';
import type { ParseResult, ToolCall } from './types.js';

// Calls out of a message while it streams in, each handed over the moment it is complete, so an
// agent can start a tool before the model has finished talking. Text deltas are appended; when
// one could close a call (it holds `>`, `}`, `]`, `)` or the fence that closes a tool_code block), the formats read the text
// from the last settled point in streaming mode (`partial`: report only finished calls, say where
// an unfinished one starts). Everything before the earliest unfinished construct — less a tail
// long enough to hold a marker still being typed, and past calls and blocks a format reports
// closed — is settled and never read again, so the work stays close to one pass over the text.
// While the unsettled text holds no marker and no call-like JSON (before the first call, and again
// once a read leaves nothing unfinished), a closing character reads nothing, and prose is settled
// without being read or copied. end() reads the unsettled rest as a finished text and
// returns every call (those already handed over, with the same ids) and every problem, in text
// order, and the content — what parseToolCalls would return for the whole text.

export interface ToolCallStream {
  /** Appends model text; returns the calls it completed (each call is returned once, by one push), read-only. */
  push(delta: string): readonly ToolCall[];
  /** The stream is over: every call (those push returned included, same ids), every problem, and the content (the text with the calls taken out). */
  end(): ParseResult;
}

/** Longer than any format's marker (`<|tool_calls_section_begin|>` is 28): a marker being typed at the end is read again. */
const TAIL = 32;
/** What most pushes return: one shared empty list, not a new one per delta (a tenth of streaming prose). */
const NONE: readonly ToolCall[] = Object.freeze([]);
/**
 * While nothing can hold a call, the settled point moves only once this much text is unsettled
 * (fewer, larger steps: 4096 rather than 1024 took a fifth off streaming 4 KB of prose, bench/llm-parse.ts).
 */
const QUIET_BATCH = 4096;
/** Quiet prose at least this long is settled when the first marker arrives, so the reads that follow start near it. */
const SETTLE_BEFORE_MARKER = 128;
/** A rest of the unsettled text this short is taken from the last deltas when the text before it is settled. */
const SHORT_REST = 256;
/** Unsettled text longer than this is read again only after it has grown by a quarter. */
const LONG_OPEN = 4096;

class Stream implements ToolCallStream {
  /**
   * The settled text, in pieces (joined once, at the end: joining on every push would copy the
   * message again and again): each the first `length` characters of `text`. Quiet prose is
   * settled whole, without cutting it (cutting copies it into one piece), and its end, the
   * unsettled rest, taken from the last deltas.
   */
  private readonly settled: { readonly text: string; readonly length: number }[] = [];
  /** The text from the settled point on: what the next read looks at. */
  private region = '';
  /** Where `region` starts in the message. */
  private from = 0;
  private atStart = true;
  private ended = false;
  private readonly found: StreamFound;

  private readonly builtInOnly: boolean;
  /** `region` holds no marker character and no call-like JSON (kept up to date push by push). */
  private calm = true;
  /** Whether `region` holds a `tool_use`. */
  private readonly toolUse = new ToolUseWatch();
  /** The call-like JSON keys `region` holds (jsonKeys' bits). */
  private keys = 0;
  private readonly recent = new RecentDeltas();
  /** Where the first object still open starts in `region` (kept while `calm`). */
  private readonly braces = new OpenBraces();
  /** While something long is open: the length `region` must reach before it is read again. */
  private readAgainAt = 0;
  /** The format whose open block `region` starts inside (settled at its `resume`; text settled unread does not change it). */
  private inside: string | undefined;

  /**
   * Brings `calm` up to date with one delta: a marker character, or a colon whose key makes JSON
   * call-like. `open`: an object was open before the delta. A colon outside every object (`Note:`,
   * `10:30`, `https:`) is no key of one, since a JSON call is read from its brace: only the colons
   * of a delta inside an object or opening one are looked at.
   */
  private note(delta: string, kinds: number, open: boolean): void {
    if (!this.calm) return;
    if ((kinds & MARKER) !== 0) {
      // The quiet prose before the first marker is settled now, unread: the reads that follow start near the marker.
      const before = this.region.length - delta.length - TAIL;
      if (before >= SETTLE_BEFORE_MARKER && this.quiet() && this.stillQuiet()) this.advance(this.openBefore(before), true);
      this.calm = false;
    }
    else if ((kinds & COLON) !== 0 && (open || (kinds & OPEN_BRACE) !== 0)) {
      // Only this delta's colons are new.
      this.keys = this.recent.colonKeys(delta, this.keys);
      this.calm = this.keys !== (NAME_KEY | ARGS_KEY);
    }
  }

  /**
   * Checked before quiet text is settled unread: `{"type": "tool_use", "name": …}` is a call
   * without an arguments key (the word is watched for as it arrives, tool-use-watch.ts). Asked
   * here rather than at every colon, since prose with a "name" has many colons and few places
   * where text is settled.
   */
  private stillQuiet(): boolean {
    if (this.keys === NAME_KEY && this.toolUse.found) {
      this.keys |= ARGS_KEY;
      this.calm = false;
    }
    return this.calm;
  }

  /**
   * True when the unsettled text cannot hold a call of a built-in format: no marker character and
   * no call-like JSON. Formats of your own may open calls with anything, so with them every
   * trigger reads; so does the start of a message, where a Functionary recipient or a Llama call
   * list needs no marker.
   */
  private quiet(): boolean {
    return this.builtInOnly && !this.atStart && this.calm;
  }

  constructor(private readonly settings: ParseSettings) {
    this.builtInOnly = allBuiltIn(settings.formats);
    this.found = new StreamFound(settings.tools);
  }

  push(delta: string): readonly ToolCall[] {
    if (this.ended) throw new ToolchainError('USAGE', 'ToolCallStream.push: the stream has ended');
    if (typeof delta !== 'string') throw new ToolchainError('USAGE', `ToolCallStream.push: expected a text delta, got ${describeKind(delta)}`);
    this.region += delta;
    this.recent.add(delta);
    const kinds = notable(delta);
    // Most deltas hold no character the stream looks for, and come while nothing it watches is half
    // way through (an object, a `tool_use`, the start): they are done with here, in a method small
    // enough to be inlined whole (checking the rest for them cost streamed prose a tenth more).
    if (kinds === 0 && this.builtInOnly && !this.atStart && !(this.calm && (this.braces.inside || this.toolUse.watching(false)))) return NONE;
    return this.notice(delta, kinds);
  }

  /** The rest of push, for a delta the stream must look at. */
  private notice(delta: string, kinds: number): readonly ToolCall[] {
    // Only calm text is settled unread: while calls are read, the braces wait for the next calm.
    const open = this.braces.inside;
    if (this.calm && ((kinds & OPEN_BRACE) !== 0 || open)) this.braces.feed(delta, this.region.length - delta.length);
    // Like the braces, watched only while calm (it decides what calm text may be settled unread); a calm that comes back looks again.
    if (this.calm && this.toolUse.watching((kinds & UNDERSCORE) !== 0)) this.toolUse.look(delta, this.region.length, this.recent);
    if (this.atStart && this.builtInOnly && this.region.length < 256 && PROSE_START.test(this.region)) this.atStart = false;
    // Most deltas hold nothing the stream looks for: nothing to note, nothing that can close a call.
    if ((kinds & ~OPEN_BRACE) === 0 && this.builtInOnly) return NONE;
    this.note(delta, kinds, open);
    // Formats of your own may end a call with any character: with them, every delta is read.
    if (this.builtInOnly && !this.mayClose(delta, kinds)) return NONE;
    // A `tool_use` object just closed is a call (without an arguments key): read it now, not at the next settling.
    if (this.toolUse.found && this.keys === NAME_KEY && (kinds & TRIGGER) !== 0) this.stillQuiet();
    if (this.quiet()) {
      // Nothing here can hold a call: settle, now and then, up to the first object still open, without reading.
      if (this.region.length >= QUIET_BATCH && this.stillQuiet()) this.advance(this.openBefore(this.region.length - TAIL), true);
      if (this.quiet()) return NONE;
    }
    if (this.region.length < this.readAgainAt) return NONE;
    // Only the block's closing tags since the calls were read (and no block read on inside of): nothing to read.
    if (!this.builtInOnly || this.inside !== undefined || this.region.length > 64 || !CLOSERS_ONLY.test(this.region)) return this.read(false);
    this.calmAfterRead(false);
    return NONE;
  }

  /**
   * Whether the delta may complete a call of a built-in format: a `}` or `)`, a closing tag, a `]`
   * that ends no marker token, or the fence that closes a tool_code block (the unsettled text
   * holds its start: the block is never settled past while open).
   */
  private mayClose(delta: string, kinds: number): boolean {
    if ((kinds & TRIGGER) !== 0) return true;
    if ((kinds & ANGLE) !== 0 && this.recent.closesTag(delta)) return true;
    if ((kinds & SQUARE) !== 0 && this.recent.closesList(delta)) return true;
    return (kinds & BACKTICK) !== 0 && this.recent.completesFence(delta) && this.region.includes(CODE_BLOCK);
  }

  end(): ParseResult {
    // The unsettled rest is read as a finished text, unless nothing in it can be a call or a
    // problem: no marker, no call-like JSON, no object left open.
    if (!this.ended && !(this.quiet() && this.stillQuiet() && this.braces.openAt < 0)) this.read(true);
    this.ended = true;
    // One join, the unsettled rest with it: a flat text to cut the content from, copied once.
    const pieces = this.settled.map((p) => (p.length === p.text.length ? p.text : p.text.slice(0, p.length)));
    pieces.push(this.region);
    return this.found.result(pieces.join(''));
  }

  private read(final: boolean): ToolCall[] {
    const { region, from } = this;
    const read = readFormats(region, this.settings.formats, { partial: !final, atMessageStart: this.atStart, tools: this.settings.tools, inside: this.inside });
    const fresh = this.found.add(read, region, from);
    if (!final) {
      const advanced = this.settle(region.length, read);
      // Nothing left unfinished: what was read holds no call to come, so only new text can
      // (the markers in the read text no longer count), and the trailing prose is not read again.
      if (read.pending === undefined && read.spans.length === read.calls.length + read.problems.length + read.closed.length) this.calmAfterRead(advanced);
      // Something open for long (hostile text, a runaway call) is read again only once the text has
      // grown by a quarter: the reads then add up to a few passes over it, not one per delta.
      this.readAgainAt = this.region.length > LONG_OPEN ? this.region.length + (this.region.length >> 2) : 0;
    }
    return fresh;
  }

  /** Moves the settled point forward (settle-point.ts); true when it moved and `keys` were worked out again for the rest. */
  private settle(length: number, read: FormatsRead): boolean {
    // Most reads find calls alone: no copy of them is made then.
    const done = read.problems.length === 0 && read.closed.length === 0 ? read.calls : [...read.calls, ...read.problems, ...read.closed];
    const next = settlePoint(length, read.pending, read.spans, done, TAIL, read.resumes);
    if (next.at === 0) return false;
    this.inside = next.inside;
    return this.advance(next.at);
  }

  /**
   * Calm, unless the unsettled text holds call-like JSON: its markers were read, and nothing they
   * open is left unfinished. Only when its last marker character is a `>` (a tag that closed):
   * after a backtick or a `[`, letters alone may still complete a marker (```` ```json ````).
   */
  private calmAfterRead(keysKnown: boolean): void {
    const last = lastMarkerChar(this.region);
    if (!this.builtInOnly || this.atStart || this.inside !== undefined || (last !== 0 && last !== 0x3e)) return;
    if (!keysKnown) this.toolUse.reset(this.region, (this.rescan() & UNDERSCORE) !== 0);
    this.calm = this.keys !== (NAME_KEY | ARGS_KEY);
  }

  /** Works out `keys` and the open braces of the unsettled text from scratch; returns its notable kinds. */
  private rescan(): number {
    const kinds = notable(this.region);
    this.keys = (kinds & COLON) === 0 ? 0 : jsonKeys(this.region);
    this.braces.reset();
    if ((kinds & OPEN_BRACE) !== 0) this.braces.feed(this.region, 0);
    return kinds;
  }

  /** `at`, or the start of the object still open when it comes first. */
  private openBefore(at: number): number {
    const open = this.braces.openAt;
    return open >= 0 && open < at ? open : at;
  }

  /**
   * `unread`: the text was never read (so never copied into one piece), and a short rest comes from
   * the last deltas. True when `keys`, `braces` and `toolUse` were worked out for the rest.
   */
  private advance(next: number, unread = false): boolean {
    if (next <= 0) return false;
    const { region } = this;
    if (this.atStart && region.slice(0, next).trim() !== '') this.atStart = false;
    // Cutting text never read would copy all of it into one piece.
    const keep = region.length - next;
    const near = unread && keep <= SHORT_REST ? this.recent.text(keep) : '';
    if (unread && near.length >= keep) {
      this.settled.push({ text: region, length: next });
      this.region = near.slice(near.length - keep);
    } else {
      this.settled.push({ text: region.slice(0, next), length: next });
      this.region = region.slice(next);
    }
    this.from += next;
    // Inside a block (a fence: a name alone makes a call there), quiet-looking text may still hold calls.
    // Text that cannot be calm (a marker, a block) is not walked for keys, braces and `tool_use`:
    // only calm text needs them, and most reads settle at a call's marker (a fifth of a read).
    const kinds = this.inside === undefined ? notable(this.region) : MARKER;
    // They are worked out when calm may come back (calmAfterRead).
    if ((kinds & MARKER) !== 0) {
      this.calm = false;
      return false;
    }
    this.rescan();
    this.toolUse.reset(this.region, (kinds & UNDERSCORE) !== 0);
    this.calm = this.keys !== (NAME_KEY | ARGS_KEY);
    return true;
  }
}

/** A parser for one streamed message; options as parseToolCalls takes them. */
export function createToolCallStream(options?: ParseOptions): ToolCallStream {
  return new Stream(checkParseOptions(options, 'createToolCallStream'));
}
