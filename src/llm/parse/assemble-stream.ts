import type { ContentSource } from './call-content.js';
import { toArguments } from './call-shape.js';
import { parseText, type TextSettings } from './parse-text.js';
import { isRecord } from '../../common/json.js';
import { problem, type CallSink } from './types.js';

// A streamed answer, assembled. OpenAI-style streams send each tool call in fragments tagged with
// its `index`: the id and name arrive once, the arguments in pieces that are only JSON once
// joined, and calls may interleave. Indices need not start at 0 or be contiguous (some servers
// number calls 0, 2, 5), so fragments are gathered per index and calls come out in index order.
// Accepted elements: whole chunks (`choices[0].delta`), the deltas themselves, and bare tool-call
// fragments. A stream without tool calls is parsed as the text its content deltas spell.

interface Slot {
  readonly index: number;
  id: string | undefined;
  name: string;
  readonly parts: string[];
  /** Arguments that arrived as an object rather than text (tolerated). */
  object: Record<string, unknown> | undefined;
}

/** Index used for the legacy `function_call` delta, which has no index. */
const LEGACY_INDEX = -1;

class Assembler {
  readonly slots = new Map<number, Slot>();
  readonly text: string[] = [];
  private last: Slot | undefined;
  private highest = -1;

  slot(index: number): Slot {
    let slot = this.slots.get(index);
    if (slot === undefined) {
      slot = { index, id: undefined, name: '', parts: [], object: undefined };
      this.slots.set(index, slot);
      if (index > this.highest) this.highest = index;
    }
    this.last = slot;
    return slot;
  }

  fragment(frag: Record<string, unknown>, index?: number): void {
    const fn = isRecord(frag.function) ? frag.function : frag;
    const id = typeof frag.id === 'string' && frag.id !== '' ? frag.id : undefined;
    const name = typeof fn.name === 'string' ? fn.name : undefined;
    let at = typeof frag.index === 'number' ? frag.index : index;
    if (at === undefined) {
      // No index: a fragment that starts a new call (a new id, or a name when the last call has one) gets the next one.
      const last = this.last;
      const starts = last === undefined || (id !== undefined && last.id !== undefined && id !== last.id) || (name !== undefined && last.name !== '');
      at = starts ? this.highest + 1 : last.index;
    }
    const slot = this.slot(at);
    if (id !== undefined && slot.id === undefined) slot.id = id;
    // Some servers repeat the whole name in every fragment; others split it.
    if (name !== undefined && name !== slot.name) slot.name += name;
    const args = fn.arguments ?? fn.args;
    if (typeof args === 'string') slot.parts.push(args);
    else if (isRecord(args)) slot.object = args;
  }

  delta(delta: Record<string, unknown>): void {
    if (typeof delta.content === 'string') this.text.push(delta.content);
    const calls = delta.tool_calls;
    if (Array.isArray(calls)) {
      for (const frag of calls) if (isRecord(frag)) this.fragment(frag);
    }
    if (isRecord(delta.function_call)) this.fragment(delta.function_call, LEGACY_INDEX);
  }
}

function firstChoice(choices: readonly unknown[]): Record<string, unknown> | undefined {
  for (const choice of choices) if (isRecord(choice) && (choice.index === undefined || choice.index === 0)) return choice;
  return undefined;
}

function rawChunk(chunk: unknown): string {
  try {
    return JSON.stringify(chunk) ?? String(chunk);
  } catch {
    return String(chunk);
  }
}

/** Adds the calls the chunks spell to the sink; returns where the content comes from (the content deltas joined). */
export function assembleStream(chunks: readonly unknown[], sink: CallSink, settings: TextSettings): ContentSource {
  const asm = new Assembler();
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i];
    if (!isRecord(chunk)) {
      sink.problems.push(problem('NOT_MODEL_OUTPUT', `stream element ${i} is not an object`, rawChunk(chunk)));
      continue;
    }
    if (Array.isArray(chunk.choices)) {
      // A chunk without a first choice (the final usage chunk) carries nothing to assemble.
      const choice = firstChoice(chunk.choices);
      const delta = choice?.delta ?? choice?.message;
      if (isRecord(delta)) asm.delta(delta);
    } else if (isRecord(chunk.delta)) {
      asm.delta(chunk.delta);
    } else if ('tool_calls' in chunk || 'content' in chunk || 'role' in chunk || 'function_call' in chunk) {
      asm.delta(chunk);
    } else if ('function' in chunk || 'index' in chunk || 'name' in chunk) {
      asm.fragment(chunk);
    } else {
      sink.problems.push(problem('NOT_MODEL_OUTPUT', `stream element ${i} is neither a chunk, a delta nor a tool-call fragment`, rawChunk(chunk)));
    }
  }
  if (asm.slots.size === 0) return asm.text.length > 0 ? parseText(asm.text.join(''), sink, settings) : undefined;
  const slots = [...asm.slots.values()].sort((a, b) => a.index - b.index);
  for (const slot of slots) {
    const text = slot.parts.join('');
    const name = slot.name.trim();
    if (name === '') {
      sink.problems.push(problem('UNREADABLE_CALL', `the streamed tool call at index ${slot.index} has no name`, text, { id: slot.id, format: 'openai' }));
      continue;
    }
    const args = slot.object !== undefined && text === '' ? { ok: true as const, value: slot.object } : toArguments(text);
    if (args.ok) sink.calls.push({ id: slot.id, name, arguments: args.value, format: 'openai' });
    else sink.problems.push(problem('INVALID_ARGUMENTS', `call to '${name}': ${args.message}`, text, { id: slot.id, name, format: 'openai' }));
  }
  return asm.text.length > 0 ? { text: asm.text.join('') } : undefined;
}
