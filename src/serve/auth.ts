import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ToolchainError } from '../common/errors.js';

// Security of `toolchain serve`. With a token, every route but /healthz needs `Authorization: Bearer T` —
// or, for the inspector in a browser (which cannot add a header to a page load or an
// EventSource), the cookie that visiting `/?token=T` once sets (HttpOnly, SameSite=Strict).
// Without a token the server only listens on loopback, and then only answers requests whose
// Host is a loopback name, so a web page cannot reach it through DNS rebinding. Either way a
// state-changing request that a browser marks as sent from another site is refused.
//
// Webhook deliveries (`/hooks/…`) need neither the token nor a loopback Host: each is signed
// with its trigger's secret, which the route checks before anything runs (routes-hooks.ts), and
// they come through whatever forwards them to a loopback server (a tunnel, a reverse proxy),
// which keeps the sender's Host. A page in a browser cannot sign one, so rebinding gains nothing.

export const TOKEN_COOKIE = 'toolchain_token';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Throws USAGE for a host other than loopback without a token: anyone who could reach it could run chains. */
export function checkListenHost(host: string, token: string | undefined): void {
  if (token === undefined && !isLoopbackHost(host)) {
    throw new ToolchainError('USAGE', `refusing to listen on ${host} without a token: anyone who can reach it could run chains; pass --token (or set TOOLCHAIN_TOKEN), or listen on 127.0.0.1`);
  }
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/**
 * The hostname of a Host header, without its port, or undefined for anything but `name[:port]`
 * or `[v6]:port`: a lax parse let `127.0.0.1:7391@evil.com` pass for loopback.
 */
export function hostname(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^(?:(\[[0-9A-Fa-f:.]+\])|([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?))(?::(\d{1,5}))?$/.exec(header);
  if (!m || (m[3] !== undefined && Number(m[3]) > 65535)) return undefined;
  return m[1] ?? m[2];
}

function cookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      // A value that is not percent-encoding (`%E0%A4%A`) is no token: a 401, not a thrown URIError.
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Why a state-changing request is refused as cross-site, or undefined. A browser marks what a
 * page on another site (another port of localhost included) sends: `Sec-Fetch-Site` when it
 * has one, else an `Origin` naming another host. A "simple" cross-site POST needs no preflight,
 * so the server must refuse it itself; clients that are not browsers send neither header.
 */
function crossSite(req: FastifyRequest): string | undefined {
  if (SAFE_METHODS.has(req.method)) return undefined;
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin' || site === 'none' ? undefined : `Sec-Fetch-Site is '${site}'`;
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  return host !== undefined && host !== '' && host.toLowerCase() === (req.headers.host ?? '').toLowerCase() ? undefined : `Origin '${origin}' is not this server`;
}

function deny(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}

export function installAuth(app: FastifyInstance, token: string | undefined): void {
  const expected = token !== undefined ? digest(token) : undefined;
  const matches = (given: string | undefined): boolean => given !== undefined && expected !== undefined && timingSafeEqual(digest(given), expected);

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0]!;
    const foreign = crossSite(req);
    if (foreign !== undefined) return deny(reply, 403, 'CROSS_SITE_REQUEST', `refused a ${req.method} from another site (${foreign}): only this server's own pages and clients that are not browsers may change runs`);
    if (req.method === 'POST' && path.startsWith('/hooks/')) return;
    if (expected === undefined) {
      const name = hostname(req.headers.host);
      if (name === undefined || !isLoopbackHost(name)) {
        return deny(reply, 403, 'HOST_NOT_ALLOWED', `this server has no token and answers only requests to a loopback host (localhost, 127.0.0.1, [::1]), not '${req.headers.host ?? ''}'`);
      }
      return;
    }
    if (path === '/healthz') return;
    const header = req.headers.authorization;
    const bearer = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
    if (matches(bearer) || matches(cookie(req.headers.cookie, TOKEN_COOKIE))) return;
    const query = (req.query as Record<string, unknown> | undefined)?.token;
    if (path === '/' && typeof query === 'string' && matches(query)) {
      // Trade the token in the address for a cookie, and drop it from the address bar.
      return reply
        .code(303)
        .header('set-cookie', `${TOKEN_COOKIE}=${encodeURIComponent(query)}; HttpOnly; SameSite=Strict; Path=/`)
        .header('location', '/')
        .send();
    }
    reply.header('www-authenticate', 'Bearer realm="toolchain"');
    return deny(reply, 401, 'UNAUTHORIZED', header === undefined ? 'this server needs a token: send Authorization: Bearer TOKEN (or open /?token=TOKEN in a browser)' : 'the token is wrong');
  });
}
