import type { ServerResponse } from 'node:http';

// Server-Sent Events over a raw response: `id` (the event's position in the run, so a client
// that reconnects with Last-Event-ID gets only what it missed), `event` (the event type) and the
// event as JSON. Writes wait for 'drain' when the socket's buffer is full; a comment line every
// `heartbeatMs` keeps proxies from closing a quiet stream.

export interface SseOptions {
  /** Skip events up to this position (from the Last-Event-ID header). */
  readonly after: number;
  readonly heartbeatMs: number;
  /** Ended early (shutdown): resolves to stop the stream. */
  readonly stop: Promise<void>;
}

export async function streamEvents(res: ServerResponse, events: AsyncIterable<{ readonly type: string }>, options: SseOptions): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': toolchain run events\n\n');
  const iterator = events[Symbol.asyncIterator]();
  let closed = false;
  const onClose = (): void => {
    closed = true;
  };
  res.on('close', onClose);
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), options.heartbeatMs);
  heartbeat.unref();
  // Wakes the loop when the client goes away or the server stops, even while no event comes.
  const gone = new Promise<'gone'>((resolve) => {
    res.once('close', () => resolve('gone'));
    void options.stop.then(() => resolve('gone'));
  });
  try {
    let position = 0;
    for (;;) {
      const next = await Promise.race([iterator.next(), gone]);
      if (next === 'gone' || next.done || closed) break;
      position++;
      if (position <= options.after) continue;
      const ok = res.write(`id: ${position}\nevent: ${next.value.type}\ndata: ${JSON.stringify(next.value)}\n\n`);
      if (!ok && !closed) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), gone]);
    }
  } finally {
    clearInterval(heartbeat);
    res.off('close', onClose);
    await iterator.return?.();
    if (!res.writableEnded) res.end();
  }
}
