import type { IncomingMessage } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { NetError } from './net-error.js';

// A response body read as a stream (gzip, deflate and br decoded) and abandoned as soon as it
// passes the limit (RESPONSE_TOO_LARGE), or when the signal aborts. A body that does not decode
// fails with BAD_RESPONSE.

export async function readLimited(response: IncomingMessage, limit: number, signal: AbortSignal): Promise<Uint8Array> {
  // Aborted before the body is read: a listener added now would never be called.
  if (signal.aborted) {
    response.destroy();
    throw signal.reason;
  }
  const encoding = String(response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : undefined;
  const stream: NodeJS.ReadableStream = decoder ? response.pipe(decoder) : response;
  const stop = (): void => {
    response.destroy();
    decoder?.destroy();
  };
  signal.addEventListener('abort', stop, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > limit) {
        stop();
        throw tooLarge(total, limit, true);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof NetError) throw error;
    if ((error as { code?: string }).code?.startsWith('Z_')) {
      throw new NetError('BAD_RESPONSE', `the response body does not decode as ${encoding}: ${(error as Error).message}`);
    }
    throw error;
  } finally {
    signal.removeEventListener('abort', stop);
  }
  return Buffer.concat(chunks);
}

/** RESPONSE_TOO_LARGE: a declared size (`partial` false) or the bytes read before stopping. */
export function tooLarge(size: number, limit: number, partial = false): NetError {
  const what = partial ? `more than ${limit} bytes (stopped at ${size})` : `${size} bytes`;
  return new NetError('RESPONSE_TOO_LARGE', `the response has ${what}; max_bytes is ${limit}`);
}

/** True when a Content-Length already says the body is over the limit (and it is not compressed). */
export function declaredTooLarge(response: IncomingMessage, limit: number): number | undefined {
  const declared = Number(response.headers['content-length']);
  return Number.isFinite(declared) && declared > limit && !response.headers['content-encoding'] ? declared : undefined;
}
