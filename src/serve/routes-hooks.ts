import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ToolchainError } from '../common/errors.js';
import type { Engine } from '../engine/types.js';

// `POST /hooks/PATH`: deliveries of the chains' webhook triggers. The route is there for the
// paths the loaded chains declare (looked up at each request, so a reload adds and removes
// them); any other is 404. It needs no token: the signature over the raw body is its
// authentication (auth.ts lets /hooks/ through), and nothing runs before it is verified.
//
// The body is read raw — the signature is over the bytes as sent — with the trigger's own limit
// instead of the server's `body-bytes`: a Content-Length over it is refused with 413 before a
// byte is read, and a body that grows past it while arriving is refused at that point. What
// is left of a refused body is read and thrown away, not kept or hashed, until it ends (or the
// server's request timeout): closing the socket on a sender still writing would reset the
// connection, and the sender would lose the answer with it.

const STATUS: ReadonlyMap<string, number> = new Map([
  ['WEBHOOK_SIGNATURE', 401],
  ['WEBHOOK_BAD_DELIVERY', 400],
  ['INPUT_INVALID', 422],
  ['WEBHOOK_SECRET_MISSING', 503],
  ['TRIGGER_PAUSED', 409],
]);

class TooLarge extends Error {}

/** The body, or TooLarge as soon as it passes `limit` (the rest then flows away unread). */
function readBody(stream: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total <= limit) return void chunks.push(chunk);
      stream.off('data', onData);
      stream.off('end', onEnd);
      chunks.length = 0;
      stream.resume();
      reject(new TooLarge());
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', reject);
  });
}

function refuse(req: FastifyRequest, reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  // The sender is told why; the server's log gets the path and the code (never a header or the body).
  req.log.warn({ event: 'webhook:refused', path: req.url.split('?')[0], status, code }, `webhook:refused ${code}`);
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}

export async function registerHookRoutes(app: FastifyInstance, engine: Engine): Promise<void> {
  await app.register(async (hooks) => {
    // Every content type, unparsed: the route reads the raw stream itself.
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    hooks.post<{ Params: { '*': string } }>('/hooks/*', async (req, reply) => {
      const path = req.params['*'];
      const endpoint = engine.triggers.webhook(path);
      if (endpoint === undefined) return refuse(req, reply, 404, 'WEBHOOK_NOT_FOUND', `no webhook trigger of the loaded chains has the path '${path}'`);
      if (!endpoint.ready) return refuse(req, reply, 503, 'WEBHOOK_SECRET_MISSING', `webhook /hooks/${path} cannot verify deliveries: the variable of its secret is not set in the server's environment`);
      const encoding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
      if (encoding !== 'identity') return refuse(req, reply, 415, 'UNSUPPORTED_MEDIA_TYPE', `a webhook's body is verified as sent: Content-Encoding '${encoding}' is not taken`);
      const declared = Number(req.headers['content-length']);
      const tooLarge = (): FastifyReply => refuse(req, reply, 413, 'BODY_TOO_LARGE', `webhook /hooks/${path} takes bodies of at most ${endpoint.maxBodyBytes} bytes (its trigger's max_body_bytes)`);
      if (Number.isFinite(declared) && declared > endpoint.maxBodyBytes) return tooLarge();
      let body: Buffer;
      try {
        body = req.body === undefined || req.body === null ? Buffer.alloc(0) : await readBody(req.body as Readable, endpoint.maxBodyBytes);
      } catch (error) {
        if (error instanceof TooLarge) return tooLarge();
        throw error;
      }
      try {
        const receipt = await endpoint.receive({ body, headers: req.headers });
        return await reply.code(receipt.new ? 202 : 200).header('cache-control', 'no-store').send({ run_ids: receipt.run_ids, delivery_id: receipt.delivery_id, new: receipt.new });
      } catch (error) {
        const status = error instanceof ToolchainError ? STATUS.get(error.code) : undefined;
        if (status !== undefined) return refuse(req, reply, status, (error as ToolchainError).code, (error as ToolchainError).message);
        throw error;
      }
    });
  });
}
