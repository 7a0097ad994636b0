import { MAX_TRANSCRIPT_BYTES } from './agent-limits.js';
import type { ChatMessage } from './wire.js';

// The transcript an agent step's output keeps: all of it when it fits in MAX_TRANSCRIPT_BYTES of
// JSON, else its first two messages (system and prompt, or the prompt and the first reply) and
// as many of the last ones as fit, with how many were left out between them.

export function outputTranscript(transcript: readonly ChatMessage[], max = MAX_TRANSCRIPT_BYTES): { transcript: readonly ChatMessage[]; omitted: number } {
  // Each message with the comma that separates it in the array.
  const sizes = transcript.map((m) => Buffer.byteLength(JSON.stringify(m)) + 1);
  let total = sizes.reduce((a, b) => a + b, 0);
  if (total <= max) return { transcript, omitted: 0 };
  const head = Math.min(2, transcript.length);
  total = sizes.slice(0, head).reduce((a, b) => a + b, 0);
  let from = transcript.length;
  while (from > head && total + sizes[from - 1]! <= max) total += sizes[--from]!;
  return { transcript: [...transcript.slice(0, head), ...transcript.slice(from)], omitted: from - head };
}
