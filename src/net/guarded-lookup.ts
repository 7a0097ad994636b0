import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { type AllowEntry, refusal } from './address-policy.js';

// The `lookup` that http.request uses to turn a host name into addresses, with the address
// policy applied to what DNS answered. The check runs at connection time, on the very addresses
// the socket then connects to, so a name that resolves to a public address when checked and to
// 127.0.0.1 a moment later (DNS rebinding) cannot slip through. Addresses the policy refuses are
// dropped; when none is left the connection fails with an error whose `refused` says why.

export class RefusedAddress extends Error {
  constructor(readonly host: string, readonly refused: string) {
    super(`${host} resolves to ${refused}`);
  }
}

export function guardedLookup(port: number, allow: readonly AllowEntry[]): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      const reasons: string[] = [];
      const allowed = addresses.filter((a) => {
        const why = refusal(a.address, port, allow);
        if (why !== undefined) reasons.push(why);
        return why === undefined;
      });
      if (allowed.length === 0) {
        callback(Object.assign(new RefusedAddress(hostname, reasons[0] ?? 'no address'), { code: 'ADDRESS_REFUSED' }), '', 0);
        return;
      }
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      else callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}
