// A small Server-Sent Events reader over fetch, for tests: every event until the stream ends.

export interface SseMessage {
  readonly id?: string;
  readonly event?: string;
  readonly data: string;
}

export async function readSse(url: string, headers: Record<string, string> = {}, onMessage?: (m: SseMessage) => void): Promise<SseMessage[]> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } });
  if (!res.ok || !res.body) throw new Error(`SSE ${url}: HTTP ${res.status}`);
  const messages: SseMessage[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':') || line === '') continue;
        const colon = line.indexOf(':');
        fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      if (fields.data === undefined) continue;
      const message: SseMessage = { data: fields.data, ...(fields.id ? { id: fields.id } : {}), ...(fields.event ? { event: fields.event } : {}) };
      messages.push(message);
      onMessage?.(message);
    }
  }
  return messages;
}
