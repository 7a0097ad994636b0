import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import type { RunStore } from '../../src/store/types.js';
import { runCli } from '../helpers/run-cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-cli.js';

// Webhook and event triggers against a real `toolchain serve` from bin/, on an SQLite store the
// test reads too: GitHub's documented example verifies and a flipped byte does not; a redelivery
// answers the same run and starts none; a body past the limit is refused before it is read; a
// Stripe signature with an old timestamp is refused; an hmac-sha256 header works; the route needs
// no token, exists only for declared paths, follows reloads, and never shows a secret. Then an
// event recorded by a real `toolchain emit` process becomes a run of the serve's event trigger,
// and `toolchain validate` reports each new key's problems by code.

// GitHub's documented example (docs.github.com, "Validating webhook deliveries").
const GITHUB_SECRET = "It's a Secret to Everybody";
const GITHUB_BODY = 'Hello, World!';
const GITHUB_SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
const STRIPE_SECRET = 'whsec_test_0123456789abcdef';
const SHOP_SECRET = 'shop-secret-9f8e7d6c';
const TOKEN = 'a-token-of-the-server-1234';

const root = mkdtempSync(join(tmpdir(), 'toolchain-webhooks-'));
const project = join(root, 'project');
const db = join(root, 'runs.db');
let serve: ServeProcess;
let store: RunStore;

const CHAINS: Record<string, string> = {
  'gh.yaml': 'name: gh\ninputs:\n  body: { default: null }\n  kind: { type: [string, "null"], default: null }\n  delivery: { type: string, default: "" }\ntriggers:\n  - webhook: { path: github, signature: github, secret_env: GH_HOOK_SECRET }\n    input_map: { body: $.event.payload, kind: $.event.type, delivery: $.event.id }\nsteps:\n  - name: nap\n    sleep: 1ms\n',
  'stripe.yaml': 'name: stripe\ninputs:\n  type: { type: string, default: "" }\ntriggers:\n  - webhook: { path: stripe, signature: stripe, secret_env: STRIPE_HOOK_SECRET }\n    input_map: { type: $.event.payload.type }\nsteps:\n  - name: nap\n    sleep: 1ms\n',
  'shop.yaml': 'name: shop\ninputs:\n  order: { default: null }\n  headers: { type: object, default: {} }\ntriggers:\n  - webhook: { path: shop/orders, signature: hmac-sha256, secret_env: SHOP_HOOK_SECRET, header: X-Shop-Signature, id_header: X-Shop-Delivery }\n    input_map: { order: $.event.payload.order, headers: $.event.headers }\nsteps:\n  - name: nap\n    sleep: 1ms\n',
  'unset.yaml': 'name: unset\ntriggers:\n  - webhook: { path: unset, signature: github, secret_env: NOT_SET_ANYWHERE_SECRET }\nsteps:\n  - name: nap\n    sleep: 1ms\n',
  'orders.yaml': 'name: orders\ninputs:\n  order: { type: object, default: {} }\ntriggers:\n  - event: order.created\n    input_map: { order: $.event.payload }\nsteps:\n  - name: nap\n    sleep: 1ms\n',
};

beforeAll(async () => {
  mkdirSync(join(project, 'chains'), { recursive: true });
  mkdirSync(join(project, 'plugins'));
  for (const [file, text] of Object.entries(CHAINS)) writeFileSync(join(project, 'chains', file), text);
  serve = await startServe({
    cwd: project,
    args: ['--store', `sqlite:${db}`],
    env: { TOOLCHAIN_TOKEN: TOKEN, TOOLCHAIN_CACHE_DIR: join(root, 'cache'), GH_HOOK_SECRET: GITHUB_SECRET, STRIPE_HOOK_SECRET: STRIPE_SECRET, SHOP_HOOK_SECRET: SHOP_SECRET },
  });
  store = await openStore(`sqlite:${db}`);
}, 60_000);

afterAll(async () => {
  await store?.close();
  await serve?.stop();
  rmSync(root, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly body: { run_ids?: string[]; delivery_id?: string; new?: boolean; error?: { code: string; message: string } };
}

/** A POST with node:http, so that a refusal that closes the socket mid-body is still read as an answer. */
function post(path: string, body: Buffer | string, headers: Record<string, string | number> = {}, chunked = false): Promise<Answer> {
  const data = typeof body === 'string' ? Buffer.from(body) : body;
  return new Promise((resolve, reject) => {
    const req = request(`${serve.url}${path}`, { method: 'POST', headers: { ...(chunked ? {} : { 'content-length': data.length }), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : (JSON.parse(text) as Answer['body']) }));
    });
    // A server that refuses a body it will not read closes the socket while this still writes it:
    // the answer came first, or comes right after; only an error with no answer at all is one.
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error) => setTimeout(() => answered || reject(error), 2000));
    if (chunked) {
      // In pieces, without a length: the server cannot know the size before reading.
      let sent = 0;
      const write = (): void => {
        while (sent < data.length) {
          const piece = data.subarray(sent, sent + 64 * 1024);
          sent += piece.length;
          if (!req.write(piece)) return void req.once('drain', write);
        }
        req.end();
      };
      write();
    } else req.end(data);
  });
}

const github = (body: string, delivery: string, signature = GITHUB_SIGNATURE): Record<string, string> => ({ 'content-type': 'application/json', 'x-hub-signature-256': signature, 'x-github-delivery': delivery, 'x-github-event': 'ping' });
const hmacHex = (secret: string, ...parts: string[]): string => parts.reduce((mac, p) => mac.update(p), createHmac('sha256', secret)).digest('hex');

async function runsOf(chain: string): Promise<string[]> {
  return (await store.listRuns({ chain, limit: 100 })).map((r) => r.id).sort();
}

async function until<T>(what: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('github webhooks', () => {
  it("verifies GitHub's documented example and starts one run under the delivery id, with no token", async () => {
    const first = await post('/hooks/github', GITHUB_BODY, github(GITHUB_BODY, 'delivery-1'));
    expect(first).toEqual({ status: 202, body: { run_ids: ['gh#1@delivery-1'], delivery_id: 'delivery-1', new: true } });
    const run = await until(async () => store.getRun('gh#1@delivery-1'));
    // Not JSON: the payload is the body's text; the type is X-GitHub-Event.
    expect(run.input).toEqual({ body: GITHUB_BODY, kind: 'ping', delivery: 'delivery-1' });
    // The rest of the API does need the token.
    expect((await fetch(`${serve.url}/api/runs`)).status).toBe(401);
  });

  it('a redelivery answers 200 with the same run ids and starts no second run', async () => {
    const again = await post('/hooks/github', GITHUB_BODY, github(GITHUB_BODY, 'delivery-1'));
    expect(again).toEqual({ status: 200, body: { run_ids: ['gh#1@delivery-1'], delivery_id: 'delivery-1', new: false } });
    expect(await runsOf('gh')).toEqual(['gh#1@delivery-1']);
  });

  it('a flipped byte, a signature of another secret, or none at all is 401: nothing is recorded or started', async () => {
    const flipped = Buffer.from(GITHUB_BODY);
    flipped[5] = flipped[5]! ^ 0x01;
    const refused = await post('/hooks/github', flipped, github('', 'delivery-2'));
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'WEBHOOK_SIGNATURE', message: expect.stringContaining('does not match the body') });
    const other = `sha256=${hmacHex('another secret', GITHUB_BODY)}`;
    expect((await post('/hooks/github', GITHUB_BODY, github(GITHUB_BODY, 'delivery-3', other))).status).toBe(401);
    expect((await post('/hooks/github', GITHUB_BODY, { 'x-github-delivery': 'delivery-4' })).body.error?.code).toBe('WEBHOOK_SIGNATURE');
    expect((await post('/hooks/github', GITHUB_BODY, github(GITHUB_BODY, 'delivery-5', 'sha256=zz'))).status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect(await runsOf('gh')).toEqual(['gh#1@delivery-1']);
    expect((await store.waits.listEvents({ name: 'webhook.github' })).length).toBe(1);
  });

  it('a 10 MB body is refused with 413, with a length before it is read, and without one as it passes the limit', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 0x61);
    const declared = await post('/hooks/github', big, github('', 'big-1'));
    expect(declared.status).toBe(413);
    expect(declared.body.error?.code).toBe('BODY_TOO_LARGE');
    const streamed = await post('/hooks/github', big, { ...github('', 'big-2'), 'transfer-encoding': 'chunked' }, true);
    expect(streamed.status).toBe(413);
    expect(await runsOf('gh')).toEqual(['gh#1@delivery-1']);
    // The limit is the trigger's (1 MiB by default), not the API's 256 KiB: a signed 600 KB body is taken.
    const large = JSON.stringify({ blob: 'b'.repeat(600 * 1024) });
    const taken = await post('/hooks/github', large, github(large, 'large-1', `sha256=${hmacHex(GITHUB_SECRET, large)}`));
    expect(taken.status).toBe(202);
    expect(await runsOf('gh')).toEqual(['gh#1@delivery-1', 'gh#1@large-1']);
  });
});

describe('stripe and hmac-sha256 webhooks', () => {
  const event = JSON.stringify({ id: 'evt_1Q2w3E', type: 'payment_intent.succeeded', data: { object: { amount: 1200 } } });
  const stripe = (body: string, at: number): Record<string, string> => ({ 'content-type': 'application/json', 'stripe-signature': `t=${at},v1=${hmacHex('wrong', `${at}.${body}`)},v1=${hmacHex(STRIPE_SECRET, `${at}.${body}`)}` });

  it('a Stripe signature with an old timestamp is refused; a fresh one starts the run the event id names', async () => {
    const now = Math.floor(Date.now() / 1000);
    const old = await post('/hooks/stripe', event, stripe(event, now - 3600));
    expect(old.status).toBe(401);
    expect(old.body.error).toMatchObject({ code: 'WEBHOOK_SIGNATURE', message: expect.stringContaining('tolerance of 300 s') });
    expect(await runsOf('stripe')).toEqual([]);
    const fresh = await post('/hooks/stripe', event, stripe(event, now));
    expect(fresh).toEqual({ status: 202, body: { run_ids: ['stripe#1@evt_1Q2w3E'], delivery_id: 'evt_1Q2w3E', new: true } });
    expect((await until(async () => store.getRun('stripe#1@evt_1Q2w3E'))).input).toEqual({ type: 'payment_intent.succeeded' });
  });

  it('an hmac-sha256 header (hex, with or without sha256=) verifies; its id header names the delivery; headers shown exclude the signature', async () => {
    const body = JSON.stringify({ order: { id: 42 } });
    const signed = await post('/hooks/shop/orders', body, { 'content-type': 'application/json', 'x-shop-signature': `sha256=${hmacHex(SHOP_SECRET, body)}`, 'x-shop-delivery': 'shop-1', cookie: 'session=x' });
    expect(signed).toEqual({ status: 202, body: { run_ids: ['shop#1@shop-1'], delivery_id: 'shop-1', new: true } });
    const run = await until(async () => store.getRun('shop#1@shop-1'));
    expect(run.input).toEqual({ order: { id: 42 }, headers: { 'content-type': 'application/json', 'x-shop-delivery': 'shop-1' } });
    const bare = await post('/hooks/shop/orders', body, { 'x-shop-signature': hmacHex(SHOP_SECRET, body), 'x-shop-delivery': 'shop-2' });
    expect(bare.status).toBe(202);
    const wrong = await post('/hooks/shop/orders', body, { 'x-shop-signature': hmacHex(SHOP_SECRET, `${body} `), 'x-shop-delivery': 'shop-3' });
    expect(wrong.status).toBe(401);
    expect(await runsOf('shop')).toEqual(['shop#1@shop-1', 'shop#1@shop-2']);
  });
});

describe('the webhook routes', () => {
  it('exist only for declared paths; a trigger whose secret is not set refuses with 503, and serve said so at start', async () => {
    expect((await post('/hooks/nowhere', '{}')).body.error?.code).toBe('WEBHOOK_NOT_FOUND');
    expect((await post('/hooks/nowhere', '{}')).status).toBe(404);
    const unset = await post('/hooks/unset', GITHUB_BODY, github(GITHUB_BODY, 'u-1'));
    expect(unset.status).toBe(503);
    expect(unset.body.error?.code).toBe('WEBHOOK_SECRET_MISSING');
    expect(serve.stderr()).toMatch(/chains\/unset\.yaml:3:60 WEBHOOK_SECRET_MISSING webhook \/hooks\/unset reads its secret from NOT_SET_ANYWHERE_SECRET/);
  });

  it('follow reloads of the chains folder: a new path is served, a removed one is 404', async () => {
    const file = join(project, 'chains', 'late.yaml');
    writeFileSync(file, 'name: late\ntriggers:\n  - webhook: { path: late, signature: hmac-sha256, header: X-Sig, secret_env: SHOP_HOOK_SECRET }\nsteps:\n  - name: nap\n    sleep: 1ms\n');
    const body = '{"late":true}';
    const answer = await until(async () => {
      const a = await post('/hooks/late', body, { 'x-sig': hmacHex(SHOP_SECRET, body) });
      return a.status === 404 ? undefined : a;
    });
    expect(answer.status).toBe(202);
    unlinkSync(file);
    await until(async () => ((await post('/hooks/late', body, { 'x-sig': hmacHex(SHOP_SECRET, body) })).status === 404 ? true : undefined));
  }, 30_000);

  it('never show a secret: not in the log, nor in `toolchain triggers --json`', async () => {
    const listed = await runCli(['triggers', '--json', '--store', `sqlite:${db}`], { cwd: project, env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache'), GH_HOOK_SECRET: GITHUB_SECRET } });
    expect(listed.code, listed.stderr).toBe(0);
    const views = JSON.parse(listed.stdout) as { chain: string; kind: string; path?: string; signature?: string; secret_env?: string; last?: { run_id: string } }[];
    expect(views.find((v) => v.chain === 'gh')).toMatchObject({ kind: 'webhook', path: '/hooks/github', signature: 'github', secret_env: 'GH_HOOK_SECRET', last: { run_id: 'gh#1@large-1', status: 'succeeded' } });
    expect(views.find((v) => v.chain === 'orders')).toMatchObject({ kind: 'event', event: 'order.created', catchup: 'all', overlap: 'allow' });
    for (const secret of [GITHUB_SECRET, STRIPE_SECRET, SHOP_SECRET]) {
      expect(listed.stdout).not.toContain(secret);
      expect(serve.stdout()).not.toContain(secret);
      expect(serve.stderr()).not.toContain(secret);
    }
    // The log names each fire with its delivery, and the metric counts them.
    expect(serve.stdout()).toContain('"event_id":"delivery-1"');
    const metrics = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(metrics).toContain('toolchain_trigger_fires_total{chain="gh",trigger="1",outcome="fired"} 2');
    expect(metrics).toContain('toolchain_trigger_fires_total{chain="shop",trigger="1",outcome="fired"} 2');
  });
});

describe('an event recorded by `toolchain emit`', () => {
  it('becomes a run of the serve\'s event trigger; the same id again starts nothing', async () => {
    const env = { TOOLCHAIN_CACHE_DIR: join(root, 'cache') };
    const sent = await runCli(['emit', 'order.created', '--data', '{"id":5}', '--id', 'order-5', '--store', `sqlite:${db}`], { cwd: root, env });
    expect(sent.code, sent.stderr).toBe(0);
    const run = await until(async () => {
      const r = await store.getRun('orders#1@order-5');
      return r?.status === 'succeeded' ? r : undefined;
    });
    expect(run.input).toEqual({ order: { id: 5 } });
    const again = await runCli(['emit', 'order.created', '--data', '{"id":6}', '--id', 'order-5', '--store', `sqlite:${db}`], { cwd: root, env });
    expect(again.stdout).toContain('was sent before');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await runsOf('orders')).toEqual(['orders#1@order-5']);
  }, 30_000);
});

describe('toolchain validate', () => {
  it('reports each new key by code at its place', async () => {
    const dir = join(root, 'invalid');
    mkdirSync(join(dir, 'chains'), { recursive: true });
    mkdirSync(join(dir, 'plugins'));
    const tail = 'steps:\n  - name: nap\n    sleep: 1ms\n';
    writeFileSync(join(dir, 'chains', 'a.yaml'), `name: a\ninputs:\n  o: { type: object, default: {} }\ntriggers:\n  - event: x\n    every: 1h\n  - event: x\n    match: { id: $.o.id }\n  - event: x\n    input_map: { o: $.tick.at }\n  - webhook: { path: gh, signature: github, secret_env: A_SECRET, header: X-Sig }\n  - webhook: { path: gh2, signature: stripe, secret_env: TOOLCHAIN_TOKEN }\n${tail}`);
    writeFileSync(join(dir, 'chains', 'b.yaml'), `name: b\ntriggers:\n  - webhook: { path: shared, signature: github, secret_env: B_SECRET }\n${tail}`);
    writeFileSync(join(dir, 'chains', 'c.yaml'), `name: c\ntriggers:\n  - webhook: { path: shared, signature: github, secret_env: B_SECRET }\n${tail}`);
    const validated = await runCli(['validate'], { cwd: dir, env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache'), B_SECRET: 'set' } });
    expect(validated.code).toBe(2);
    const lines = validated.stdout.trim().split('\n').map((l) => /^(\S+):(\d+):(\d+) ([A-Z_]+)/.exec(l)!.slice(1, 5).join(' '));
    expect(lines).toEqual([
      'chains/a.yaml 5 5 BAD_TRIGGER', // event and every
      'chains/a.yaml 8 18 BAD_TRIGGER', // a match reading a path
      'chains/a.yaml 10 21 TRIGGER_INPUT', // $.tick in an event trigger
      'chains/a.yaml 11 67 BAD_TRIGGER', // header without hmac-sha256
      'chains/a.yaml 12 58 BAD_TRIGGER', // a toolchain variable as the secret
      'chains/c.yaml 3 22 BAD_TRIGGER', // the path b.yaml declares
    ]);
    // A valid chain whose secret is not set here: a warning at secret_env, and validate passes.
    writeFileSync(join(dir, 'chains', 'a.yaml'), `name: a\ntriggers:\n  - webhook: { path: gh, signature: github, secret_env: A_SECRET }\n${tail}`);
    unlinkSync(join(dir, 'chains', 'c.yaml'));
    const warned = await runCli(['validate'], { cwd: dir, env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache'), B_SECRET: 'set' } });
    expect(warned.code, warned.stdout + warned.stderr).toBe(0);
    expect(warned.stdout).toContain('chains/a.yaml:3:57 WEBHOOK_SECRET_MISSING webhook /hooks/gh reads its secret from A_SECRET, which is not set here');
  }, 30_000);
});
