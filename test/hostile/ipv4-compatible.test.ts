import { describe, expect, it } from 'vitest';
import httpRequest from '../../plugins/http/tools/http_request.js';
import { refusal } from '../../src/net/index.js';
import { context, failure } from './helpers.js';

// `http://[::127.0.0.1]/`, the deprecated IPv4-compatible IPv6 form, was attempted: a URL writes
// it `[::7f00:1]`, which ipaddr.js calls unicast. Every address of `::/96` but `::` and `::1`
// embeds an IPv4 address and is refused, as the other embedding forms are.

describe('IPv4-compatible IPv6 addresses', () => {
  it('refuses http://[::127.0.0.1]/ and the other spellings before connecting', async () => {
    for (const url of ['http://[::127.0.0.1]/', 'http://[::7f00:1]:8080/', 'http://[0:0:0:0:0:0:a00:1]/', 'http://[::169.254.169.254]/latest/meta-data/', 'http://[::8.8.8.8]/']) {
      const f = await failure(httpRequest({ url }, context()));
      expect({ url, code: f.code }).toEqual({ url, code: 'ADDRESS_REFUSED' });
    }
    expect(refusal('::7f00:1', 80, [])).toMatch(/IPv4-compatible.*127\.0\.0\.1/);
  });

  it('still allows public IPv6, and judges ::1 as loopback', () => {
    expect(refusal('2606:4700::1111', 443, [])).toBeUndefined();
    expect(refusal('::1', 80, [])).toMatch(/loopback/);
  });
});
