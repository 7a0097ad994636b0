import { createRequire } from 'node:module';
import { NetError } from './net-error.js';

// ipaddr.js is CommonJS with `export =` typings: required, so that it loads the same way from
// vitest's ES modules and from the engine's CommonJS evaluation of plugin code.
type IpAddr = typeof import('ipaddr.js');
const ipaddr = createRequire(import.meta.url)('ipaddr.js') as IpAddr;
type Address = ReturnType<IpAddr['parse']>;

// Which addresses outbound HTTP (the http plugin's http_request, OpenAPI operations) may connect
// to (server-side request forgery): by default only public unicast addresses. Refused unless
// allowed: loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7),
// link-local (169.254/16 — cloud metadata services live at 169.254.169.254 — and fe80::/10),
// carrier-grade NAT (100.64/10), unspecified (0.0.0.0, ::), multicast, broadcast, reserved and
// documentation ranges, and IPv6 forms that embed an IPv4 address (IPv4-compatible `::a.b.c.d`,
// NAT64, 6to4, Teredo) other
// than plain IPv4-mapped ones, which are judged as the IPv4 address they carry.
//
// TOOLCHAIN_HTTP_ALLOW lists what is allowed anyway, comma-separated: an address
// (`127.0.0.1`, `::1`), a CIDR range (`10.0.0.0/8`, `fd00::/8`), either with a port
// (`127.0.0.1:8765`, `[::1]:8765`, `10.0.0.0/8:443`).

export const ALLOW_VARIABLE = 'TOOLCHAIN_HTTP_ALLOW';

export interface AllowEntry {
  readonly range: [Address, number];
  readonly port?: number;
  readonly text: string;
}

/** Parses TOOLCHAIN_HTTP_ALLOW; BAD_ALLOW_LIST names the entry that does not read. */
export function parseAllowList(text: string | undefined): AllowEntry[] {
  if (text === undefined || text.trim() === '') return [];
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseEntry);
}

function parseEntry(text: string): AllowEntry {
  const bad = (): Error =>
    new NetError('BAD_ALLOW_LIST', `${ALLOW_VARIABLE} entry "${text}" is not an address or CIDR range with an optional port, e.g. 127.0.0.1:8765 or 10.0.0.0/8`);
  let host = text;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if ((text.match(/:/g) ?? []).length === 1) {
    // IPv4 (or an IPv4 range) with a port; a bare IPv6 address has several colons.
    const colon = text.lastIndexOf(':');
    host = text.slice(0, colon);
    port = Number(text.slice(colon + 1));
    if (!/^\d+$/.test(text.slice(colon + 1))) throw bad();
  }
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535)) throw bad();
  let range: [Address, number];
  try {
    if (host.includes('/')) range = ipaddr.parseCIDR(host);
    else {
      const address = ipaddr.parse(host);
      if (address.kind() === 'ipv4' && !ipaddr.IPv4.isValidFourPartDecimal(host)) throw bad();
      range = [address, address.kind() === 'ipv4' ? 32 : 128];
    }
  } catch {
    throw bad();
  }
  return { range, ...(port !== undefined ? { port } : {}), text };
}

/** undefined when `address` (a literal IP) may be connected to on `port`; else why not. */
export function refusal(address: string, port: number, allow: readonly AllowEntry[]): string | undefined {
  let ip: Address;
  try {
    ip = ipaddr.process(address); // IPv4-mapped IPv6 becomes the IPv4 address it carries
  } catch {
    return `"${address}" is not an IP address`;
  }
  for (const entry of allow) {
    if (entry.port !== undefined && entry.port !== port) continue;
    if (ip.kind() === entry.range[0].kind() && ip.match(entry.range)) return undefined;
  }
  const kind = ip.range();
  // `::a.b.c.d`, the deprecated IPv4-compatible form, is what a URL makes of `[::127.0.0.1]`
  // (`[::7f00:1]`), and ipaddr.js calls it unicast: it embeds an IPv4 address, so it is refused.
  if (ip.kind() === 'ipv6' && kind === 'unicast' && (ip as ReturnType<IpAddr['IPv6']['parse']>).parts.slice(0, 6).every((p) => p === 0)) {
    const parts = (ip as ReturnType<IpAddr['IPv6']['parse']>).parts;
    return `${ip.toString()} is an IPv4-compatible IPv6 address (it embeds ${parts[6]! >> 8}.${parts[6]! & 255}.${parts[7]! >> 8}.${parts[7]! & 255})`;
  }
  if (kind === 'unicast') return undefined;
  return `${ip.toString()} is a ${DESCRIPTION[kind] ?? `${kind}`} address`;
}

const DESCRIPTION: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private (unique local)',
  linkLocal: 'link-local (cloud metadata services live there)',
  carrierGradeNat: 'carrier-grade NAT',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  reserved: 'reserved',
};
