import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookPlan } from '../compiler/index.js';

// Whether a webhook delivery was signed with the trigger's secret: the HMAC-SHA256 of the raw
// body as received (never of a parsed and re-serialised one), compared in constant time.
//
// - github: `X-Hub-Signature-256: sha256=HEX`, the HMAC of the body.
// - stripe: `Stripe-Signature: t=TIMESTAMP,v1=HEX[,v1=HEX…]`, the HMAC of `TIMESTAMP.BODY`; any
//   v1 may match (Stripe sends several while a secret is being rolled), and the timestamp must be
//   within the tolerance of the clock, so that a recorded delivery cannot be replayed later.
// - hmac-sha256: the trigger's `header` holds the hex HMAC of the body, optionally after `sha256=`.
//
// A signature is read only if it is 64 hex digits: a digest is 32 bytes, and Buffer.from(…,
// 'hex') would silently drop what is not hex, so the shape is checked first; the comparison of
// two 32-byte digests is then timingSafeEqual's. What is refused says why, never with the secret
// or the expected digest.

export type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

export type SignatureCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

const HEX = /^[0-9a-fA-F]{64}$/;

/** The one value of a header (lower-case name); undefined when absent or sent more than once. */
export function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

function hmac(secret: string, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** `given` (hex) is the digest `expected`, compared in constant time. */
function sameDigest(given: string, expected: Buffer): boolean {
  if (!HEX.test(given)) return false;
  const bytes = Buffer.from(given, 'hex');
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

export function verifySignature(plan: WebhookPlan, secret: string, body: Buffer, headers: Headers, now: number): SignatureCheck {
  switch (plan.signature) {
    case 'github': {
      const given = header(headers, 'x-hub-signature-256');
      if (given === undefined) return { ok: false, reason: 'the X-Hub-Signature-256 header is missing' };
      if (!given.startsWith('sha256=')) return { ok: false, reason: 'X-Hub-Signature-256 is not sha256=HEX' };
      return sameDigest(given.slice('sha256='.length).trim(), hmac(secret, body)) ? { ok: true } : { ok: false, reason: 'X-Hub-Signature-256 does not match the body' };
    }
    case 'stripe':
      return verifyStripe(plan, secret, body, headers, now);
    case 'hmac-sha256': {
      const name = plan.header!;
      const given = header(headers, name);
      if (given === undefined) return { ok: false, reason: `the ${name} header is missing` };
      const hex = given.trim().replace(/^sha256=/, '');
      return sameDigest(hex, hmac(secret, body)) ? { ok: true } : { ok: false, reason: `${name} does not match the body` };
    }
  }
}

function verifyStripe(plan: WebhookPlan, secret: string, body: Buffer, headers: Headers, now: number): SignatureCheck {
  const given = header(headers, 'stripe-signature');
  if (given === undefined) return { ok: false, reason: 'the Stripe-Signature header is missing' };
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of given.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1') signatures.push(value);
  }
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'Stripe-Signature has no timestamp t=SECONDS' };
  if (signatures.length === 0) return { ok: false, reason: 'Stripe-Signature has no v1 signature' };
  const expected = hmac(secret, timestamp, '.', body);
  // Every v1 is compared, so how long it takes does not say which one matched.
  let matched = false;
  for (const s of signatures) matched = sameDigest(s, expected) || matched;
  if (!matched) return { ok: false, reason: 'no v1 signature of Stripe-Signature matches the body' };
  const skewS = Math.abs(now / 1000 - Number(timestamp));
  if (skewS * 1000 > plan.toleranceMs) return { ok: false, reason: `the signed timestamp is ${Math.round(skewS)} s from the server's clock, more than the tolerance of ${plan.toleranceMs / 1000} s` };
  return { ok: true };
}
