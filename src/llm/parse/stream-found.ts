import { mergeClaims, textWithoutCalls } from './call-content.js';
import { unknownTool } from './check-names.js';
import type { KnownTools } from './known-tools.js';
import { toPending, toProblem } from './parse-text.js';
import type { FormatsRead, ReadCall, ReadClaim, ReadProblem } from './read-formats.js';
import { textPositions } from './text-position.js';
import type { ParseProblem, ParseResult, ToolCall } from './types.js';

// What a streamed message's reads have found: the calls handed over (each once, with the id
// parseToolCalls would give it) and the problems. A read sees the unsettled text again, so it
// finds again what an earlier read found: each find is known by where it starts in the message.
// For the content, each call's span is kept (a later read of a call handed over already may find
// it longer: its closing tag came after it was complete) and every read's claims, which the end
// joins into the blocks one read of the whole text would have claimed.
// Split from tool-call-stream.ts, which decides when to read.

interface Emitted {
  readonly at: number;
  end: number;
  readonly call: ToolCall;
}

export class StreamFound {
  private readonly emitted = new Map<string, Emitted>();
  private readonly problems = new Map<string, { at: number; problem: ParseProblem | ReadProblem }>();
  private readonly usedIds = new Set<string>();
  private readonly claims: ReadClaim[] = [];
  private nextId = 1;

  constructor(private readonly tools: KnownTools | undefined) {}

  /** The calls of a read of `region` (which starts at `from` in the message) not found before; its problems are kept. */
  add(read: FormatsRead, region: string, from: number): ToolCall[] {
    const fresh: ToolCall[] = [];
    // Several calls found at one place (a list of calls in one block) are told apart by their order there.
    let k = 0;
    for (let i = 0; i < read.calls.length; i++) {
      const found = read.calls[i]!;
      const at = from + found.start;
      k = i > 0 && read.calls[i - 1]!.start === found.start ? k + 1 : 0;
      const key = `${at}#${k}`;
      const known = this.emitted.get(key);
      if (known !== undefined) {
        if (from + found.end > known.end) known.end = from + found.end;
        continue;
      }
      if (this.problems.has(key)) continue;
      const call = this.take(found, at, from + found.end, key);
      if (call !== undefined) fresh.push(call);
    }
    for (const c of read.claims) this.claims.push(from === 0 ? c : { start: from + c.start, end: from + c.end, closed: c.closed, hide: c.hide, format: c.format });
    for (const found of read.problems) {
      // Worded at the end, when the whole text gives the line and column.
      const shifted: ReadProblem = { ...found, start: from + found.start, end: from + found.end, raw: found.raw ?? region.slice(found.start, found.end) };
      const key = `${shifted.start}:${found.message}`;
      if (!this.problems.has(key)) this.problems.set(key, { at: shifted.start, problem: shifted });
    }
    return fresh;
  }

  /** Every call and problem in text order, and the content: `whole` is the whole message. */
  result(whole: string): ParseResult {
    const emitted = [...this.emitted.values()].sort((a, b) => a.at - b.at);
    const calls = emitted.map((e) => e.call);
    const spans = emitted.map((e) => ({ start: e.at, end: e.end }));
    const content = textWithoutCalls(whole, spans, this.claims.length > 1 ? mergeClaims(this.claims) : this.claims);
    if (this.problems.size === 0) return { calls, problems: [], content };
    const position = textPositions(whole);
    const problems = [...this.problems.values()]
      .sort((a, b) => a.at - b.at)
      .map((p) => ('format' in p.problem && 'start' in p.problem ? toProblem(p.problem, whole, position) : p.problem) as ParseProblem);
    return { calls, problems, content };
  }

  /** One complete call: checked like parseToolCalls checks it, given an id, remembered. */
  private take(found: ReadCall, at: number, end: number, key: string): ToolCall | undefined {
    const entry = toPending(found, { tools: this.tools }, at);
    if (entry === undefined) return undefined; // not a call (a placeholder, a definition)
    if ('code' in entry) {
      this.problems.set(key, { at, problem: entry });
      return undefined;
    }
    if (this.tools !== undefined && !this.tools.has(entry.name)) {
      this.problems.set(key, { at, problem: unknownTool({ ...entry, at }, this.tools) });
      return undefined;
    }
    const id = entry.id ?? this.newId();
    this.usedIds.add(id);
    const call: ToolCall = { id, name: entry.name, arguments: entry.arguments };
    this.emitted.set(key, { at, end, call });
    return call;
  }

  private newId(): string {
    while (this.usedIds.has(`call_${this.nextId}`)) this.nextId++;
    return `call_${this.nextId++}`;
  }
}
