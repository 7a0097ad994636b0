import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { type AllowEntry, refusal } from './address-policy.js';
import { guardedLookup } from './guarded-lookup.js';
import { NetError } from './net-error.js';

// One HTTP exchange with node:http (fetch cannot check the address it connects to): the host is
// held to the address policy — a literal IP before connecting, a name through guardedLookup as
// it is resolved — and redirects are not followed here, so the caller checks every hop.

export interface RequestSpec {
  readonly url: URL;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal: AbortSignal;
  readonly allow: readonly AllowEntry[];
}

export function portOf(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

export function sendRequest(spec: RequestSpec): Promise<IncomingMessage> {
  const { url, method, headers, body, signal, allow } = spec;
  const port = portOf(url);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host)) {
    const why = refusal(host, port, allow);
    if (why !== undefined) return Promise.reject(refused(url, why));
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, {
      method,
      headers: body !== undefined ? { ...headers, 'content-length': String(Buffer.byteLength(body)) } : headers,
      signal,
      // A fresh connection per request: a pooled socket would skip the lookup, and idle sockets
      // would keep a CLI process alive.
      agent: false,
      lookup: guardedLookup(port, allow),
    });
    req.once('response', resolve);
    req.once('error', (error: Error & { code?: string; refused?: string }) => {
      reject(error.code === 'ADDRESS_REFUSED' ? refused(url, error.message) : error);
    });
    req.end(body);
  });
}

function refused(url: URL, why: string): Error {
  return new NetError(
    'ADDRESS_REFUSED',
    `${url.href} was not requested: ${why}; private, loopback, link-local and metadata addresses are refused unless TOOLCHAIN_HTTP_ALLOW lists them (e.g. TOOLCHAIN_HTTP_ALLOW=127.0.0.1:8765,10.0.0.0/8)`,
  );
}
