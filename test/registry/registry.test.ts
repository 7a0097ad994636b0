import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDiskCache } from '../../src/cache/index.js';
import { HandlerError, ToolchainError } from '../../src/common/errors.js';
import { checkApproval } from '../../src/call/index.js';
import { callOnce, contextFor, testOwner } from '../fixtures/call/call-helpers.js';
import {
  createCircuitBreaker,
  createRegistry,
  createSchemaCompiler,
  toolNotFound,
  type ToolContext,
  type ToolDefinition,
} from '../../src/registry/index.js';

function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  return { signal: new AbortController().signal, attempt: 1, run_id: 'r1', step: 's1', log: () => undefined, env: {}, idempotencyKey: 'r1:s1', ...overrides };
}

const weather: ToolDefinition = {
  name: 'weather',
  description: 'Forecast for a city.',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      days: { type: 'integer', minimum: 1, default: 3 },
      unit: { enum: ['metric', 'imperial'], default: 'metric' },
      detailed: { type: 'boolean' },
      email: { type: 'string', format: 'email' },
    },
    required: ['city'],
    additionalProperties: false,
  },
  handler: (args) => args,
};

async function rejection(promise: Promise<unknown>): Promise<ToolchainError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolchainError);
    return error as ToolchainError;
  }
  throw new Error('expected a rejection');
}

describe('argument validation', () => {
  const tool = createRegistry().register(weather);

  it('lists every problem with its field, the expected type, enum values and did-you-mean', () => {
    const result = tool.prepare({ citty: 'Osaka', days: 'many', unit: 'kelvin', email: 'nope' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const byPath = Object.fromEntries(result.problems.map((p) => [p.path, p]));
    expect(byPath['/city']).toMatchObject({ expected: 'string' });
    expect(byPath['/city']!.message).toContain("missing required property 'city'");
    expect(byPath['/citty']!.message).toContain("did you mean 'city'?");
    expect(byPath['/citty']!.allowed).toEqual(['city', 'days', 'unit', 'detailed', 'email']);
    expect(byPath['/days']).toMatchObject({ expected: 'integer' });
    expect(byPath['/days']!.message).toContain('"many"');
    expect(byPath['/unit']).toMatchObject({ allowed: ['metric', 'imperial'] });
    expect(byPath['/unit']!.message).toContain('"metric", "imperial"');
    expect(byPath['/email']!.expected).toContain('email');
    expect(result.problems).toHaveLength(5);
  });

  it('suggests the closest enum value', () => {
    const result = tool.prepare({ city: 'x', unit: 'metrik' });
    expect(!result.ok && result.problems[0]!.message).toContain('did you mean "metric"?');
  });

  it('names nested fields readably', () => {
    const nested = createRegistry().register({
      name: 'n',
      parameters: { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer' } } } } } },
      handler: () => null,
    });
    const result = nested.prepare({ items: [{ qty: 1 }, { qty: 'lots' }] });
    expect(!result.ok && result.problems[0]).toMatchObject({ path: '/items/1/qty', expected: 'integer' });
    expect(!result.ok && result.problems[0]!.message).toContain("'items[1].qty'");
  });

  it('fills defaults and coerces types on a copy, leaving the caller’s object untouched', () => {
    const args = { city: 'Osaka', days: '5', detailed: 'true' };
    const result = tool.prepare(args);
    expect(result).toEqual({ ok: true, args: { city: 'Osaka', days: 5, unit: 'metric', detailed: true } });
    expect(args).toEqual({ city: 'Osaka', days: '5', detailed: 'true' });
  });

  it('copies nested arguments deeply when the schema reaches into them', () => {
    const nested = createRegistry().register({
      name: 'n',
      parameters: { type: 'object', properties: { opts: { type: 'object', properties: { n: { type: 'integer', default: 1 } } } } },
      handler: () => null,
    });
    const args = { opts: { } as Record<string, unknown> };
    const result = nested.prepare(args);
    expect(result).toEqual({ ok: true, args: { opts: { n: 1 } } });
    expect(args.opts).toEqual({});
  });

  it('refuses arguments that are not an object', () => {
    expect(tool.prepare(null as unknown as Record<string, unknown>)).toMatchObject({ ok: false, problems: [{ path: '', expected: 'object' }] });
    expect(tool.prepare([] as unknown as Record<string, unknown>).ok).toBe(false);
  });

  it('rejects an invalid schema with PLUGIN_INVALID', () => {
    expect(() => createRegistry().register({ name: 'bad', parameters: { type: 'objekt' }, handler: () => 1 })).toThrow(
      expect.objectContaining({ code: 'PLUGIN_INVALID' }),
    );
    expect(() => createRegistry().register({ name: 'bad name', handler: () => 1 })).toThrow(expect.objectContaining({ code: 'PLUGIN_INVALID' }));
  });
});

describe('results', () => {
  const reg = createRegistry({ resultLimitBytes: 1000 });
  const make = (name: string, result: unknown, extra: Partial<ToolDefinition> = {}) =>
    reg.register({ name, handler: () => result, ...extra });

  it('refuses undefined', async () => {
    const error = await rejection(make('u', undefined).invoke({}, ctx()));
    expect(error.code).toBe('RESULT_INVALID');
    expect(error.message).toContain('undefined');
  });

  it('refuses circular, BigInt, functions, NaN and Maps, naming where', async () => {
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    for (const [value, where] of [
      [circular, '/self'],
      [{ n: 10n }, '/n'],
      [{ list: [1, () => 2] }, '/list/1'],
      [{ x: Number.NaN }, '/x'],
      [{ m: new Map() }, '/m'],
    ] as const) {
      const error = await rejection(make('bad', value).invoke({}, ctx()));
      expect(error.code).toBe('RESULT_INVALID');
      expect(error.diagnostics[0]!.pointer).toBe(where);
    }
  });

  it('normalises Dates to their JSON', async () => {
    const when = new Date('2024-01-02T03:04:05Z');
    await expect(make('d', { when }).invoke({}, ctx())).resolves.toEqual({ when: '2024-01-02T03:04:05.000Z' });
  });

  it('refuses a result over the limit with RESULT_TOO_LARGE', async () => {
    const error = await rejection(make('big', { text: 'x'.repeat(2000) }).invoke({}, ctx()));
    expect(error.code).toBe('RESULT_TOO_LARGE');
    await expect(make('bigString', 'y'.repeat(5000)).invoke({}, ctx())).rejects.toMatchObject({ code: 'RESULT_TOO_LARGE' });
    // Under the limit passes, even when the cheap bound says it might not.
    await expect(make('fits', { text: 'z'.repeat(500) }).invoke({}, ctx())).resolves.toEqual({ text: 'z'.repeat(500) });
  });

  it('cuts and marks with truncate: true, within the limit', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ id: i, text: 'abcdefghij' }));
    const result = (await make('cut', { items }, { truncate: true }).invoke({}, ctx())) as {
      truncated: boolean;
      original_bytes: number;
      value: { items: unknown[] };
    };
    expect(result.truncated).toBe(true);
    expect(result.original_bytes).toBe(JSON.stringify({ items }).length);
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(1000);
    expect(result.value.items.length).toBeGreaterThan(5);
    expect(result.value.items[0]).toEqual(items[0]);
    const text = (await make('cutText', 'é'.repeat(3000), { truncate: true }).invoke({}, ctx())) as { value: string };
    expect(Buffer.byteLength(JSON.stringify(text))).toBeLessThanOrEqual(1000);
    expect(text.value.length).toBeGreaterThan(400);
  });

  it('checks the returns schema', async () => {
    const tool = make('r', { temp: 'warm' }, { returns: { type: 'object', properties: { temp: { type: 'number' } }, required: ['temp', 'unit'] } });
    const error = await rejection(tool.invoke({}, ctx()));
    expect(error.code).toBe('RESULT_INVALID');
    expect(error.diagnostics.map((d) => d.pointer).sort()).toEqual(['/temp', '/unit']);
    expect(error.message).toContain("missing required property 'unit'");
  });
});

describe('handler calls', () => {
  it('passes only the env variables listed (the call context reads the tool\'s env)', async () => {
    const reg = createRegistry({ env: { GEO_KEY: 'k1', SECRET: 's' } });
    const tool = reg.register({ name: 'e', env: ['GEO_KEY', 'MISSING'], handler: (_a, c) => ({ ...c.env }) });
    await expect(tool.invoke({}, contextFor(tool))).resolves.toEqual({ GEO_KEY: 'k1' });
    const none = reg.register({ name: 'n', handler: (_a, c) => Object.keys(c.env) });
    await expect(none.invoke({}, contextFor(none))).resolves.toEqual([]);
    const key = reg.register({ name: 'k', handler: (_a, c) => c.idempotencyKey });
    await expect(key.invoke({}, contextFor(key))).resolves.toBe('r1:s1');
  });

  it('classifies what a handler throws, keeping its own string code', async () => {
    const reg = createRegistry();
    const coded = reg.register({ name: 'c', handler: () => { throw Object.assign(new Error('slow down'), { code: 'RATE_LIMITED' }); } });
    await expect(callOnce(coded)).resolves.toMatchObject({ ok: false, error: { code: 'RATE_LIMITED', message: 'slow down' } });
    const explicit = reg.register({ name: 'h', handler: () => { throw new HandlerError('QUOTA', 'out of quota'); } });
    await expect(callOnce(explicit)).resolves.toMatchObject({ ok: false, error: { code: 'QUOTA', message: 'out of quota' } });
    const plain = reg.register({ name: 'p', handler: async () => { throw new Error('boom'); } });
    await expect(callOnce(plain)).resolves.toMatchObject({ ok: false, error: { code: 'TOOL_ERROR', message: 'boom' } });
    const str = reg.register({ name: 's', handler: () => { throw 'bad'; } });
    await expect(callOnce(str)).resolves.toMatchObject({ ok: false, error: { code: 'TOOL_ERROR', message: 'bad' } });
    const typeError = reg.register({ name: 't', handler: () => (undefined as unknown as { x: number }).x });
    await expect(callOnce(typeError)).resolves.toMatchObject({ ok: false, error: { code: 'TOOL_ERROR' } });
  });

  it('forwards ctx without reading its signal unless the handler does', async () => {
    let reads = 0;
    const signal = new AbortController().signal;
    const base = ctx();
    const lazy = Object.defineProperty({ ...base }, 'signal', { get: () => (reads++, signal), enumerable: true });
    const reg = createRegistry();
    const quiet = reg.register({ name: 'q', handler: (_a, c) => ({ run: c.run_id, step: c.step, attempt: c.attempt }) });
    await expect(quiet.invoke({}, lazy)).resolves.toEqual({ run: 'r1', step: 's1', attempt: 1 });
    expect(reads).toBe(0);
    const reader = reg.register({ name: 'r', handler: (_a, c) => c.signal === signal });
    await expect(reader.invoke({}, lazy)).resolves.toBe(true);
    expect(reads).toBe(1);
  });

  it('with a circuit breaker, settles when the signal aborts even if the handler hangs, and counts it', async () => {
    const tool = createRegistry().register({ name: 'hang', circuit_breaker: { failures: 1, reset_after: 60 }, handler: () => new Promise(() => undefined) });
    const controller = new AbortController();
    const call = tool.invoke({}, ctx({ signal: controller.signal }));
    controller.abort(new ToolchainError('TIMEOUT', 'took too long'));
    await expect(call).rejects.toMatchObject({ code: 'TIMEOUT' });
    await expect(tool.invoke({}, ctx())).rejects.toMatchObject({ code: 'CIRCUIT_OPEN' });
  });
});

describe('approval (through the call unit)', () => {
  const reg = createRegistry();
  const handler = vi.fn(() => 'done');
  const tool = reg.register({ name: 'rm', dangerous: true, handler });
  const info = { args: { path: '/' }, step: 'clean', run_id: 'r9' };

  it('passes when approved and tells the callback what is asked', async () => {
    const approve = vi.fn(async () => true);
    await checkApproval(tool, { approve }, info);
    expect(approve).toHaveBeenCalledWith({ tool: 'rm', args: { path: '/' }, step: 'clean', run_id: 'r9' });
    await expect(callOnce(tool, { path: '/tmp' }, { ...testOwner, approve })).resolves.toMatchObject({ ok: true, value: 'done' });
    expect(approve).toHaveBeenLastCalledWith({ tool: 'rm', args: { path: '/tmp' }, step: 's1', run_id: 'r1' });
  });

  it('refuses when the callback says no, throws, or is absent, and the handler never runs', async () => {
    await expect(checkApproval(tool, { approve: () => false }, info)).rejects.toMatchObject({ code: 'APPROVAL_DENIED' });
    await expect(checkApproval(tool, { approve: () => { throw new Error('no tty'); } }, info)).rejects.toMatchObject({ code: 'APPROVAL_DENIED' });
    const error = await rejection(checkApproval(tool, { approve: undefined }, info));
    expect(error.code).toBe('APPROVAL_DENIED');
    expect(error.message).toContain('--approve rm');
    handler.mockClear();
    await expect(callOnce(tool, {}, { ...testOwner, approve: () => false })).resolves.toMatchObject({ ok: false, error: { code: 'APPROVAL_DENIED' } });
    expect(handler).not.toHaveBeenCalled();
  });

  it('does not ask about tools that are not dangerous', async () => {
    const approve = vi.fn(() => false);
    await expect(callOnce(reg.register({ name: 'safe', handler: () => 1 }), {}, { ...testOwner, approve })).resolves.toMatchObject({ ok: true, value: 1 });
    expect(approve).not.toHaveBeenCalled();
  });
});

describe('cache', () => {
  it('reuses results for identical arguments until the ttl passes', async () => {
    let now = 1000;
    const handler = vi.fn((args: Record<string, unknown>) => ({ n: handler.mock.calls.length, args }));
    const tool = createRegistry({ now: () => now }).register({ name: 'c', cache: { ttl: '10s' }, handler });
    const first = await tool.invoke({ a: 1, b: 2 }, ctx());
    const again = await tool.invoke({ b: 2, a: 1 }, ctx());
    expect(again).toEqual(first);
    expect(again).not.toBe(first); // a fresh copy: no caller can change another's result
    expect(handler).toHaveBeenCalledTimes(1);
    await tool.invoke({ a: 2 }, ctx());
    expect(handler).toHaveBeenCalledTimes(2);
    now += 10_001;
    await tool.invoke({ a: 1, b: 2 }, ctx());
    expect(handler).toHaveBeenCalledTimes(3);
  });

  it('does not cache failures and starts empty for a new version', async () => {
    let fail = true;
    const def: ToolDefinition = { name: 'f', cache: { ttl: 60 }, handler: () => { if (fail) throw new Error('x'); return 1; } };
    const reg = createRegistry();
    reg.setPluginTools('p', '1.0.0', [def]);
    const v1 = reg.current().get('f')!;
    await expect(v1.invoke({}, ctx())).rejects.toThrow();
    fail = false;
    await expect(v1.invoke({}, ctx())).resolves.toBe(1);
    reg.setPluginTools('p', '1.0.0', [{ ...def, handler: () => 2 }]);
    await expect(reg.current().get('f')!.invoke({}, ctx())).resolves.toBe(2);
  });
});

describe('circuit breaker', () => {
  it('goes closed → open → half-open → closed, and re-opens on a failed trial', async () => {
    let now = 0;
    let healthy = false;
    const handler = vi.fn(() => { if (!healthy) throw new Error('down'); return 'up'; });
    const tool = createRegistry({ now: () => now }).register({ name: 'b', circuit_breaker: { failures: 3, reset_after: '30s' }, handler });
    const code = async (): Promise<unknown> => {
      const outcome = await callOnce(tool);
      return outcome.ok ? outcome.value : outcome.error.code;
    };
    for (let i = 0; i < 3; i++) await expect(code()).resolves.toBe('TOOL_ERROR');
    await expect(code()).resolves.toBe('CIRCUIT_OPEN');
    expect(handler).toHaveBeenCalledTimes(3);
    now += 30_000; // half-open: one trial, which fails and re-opens
    await expect(code()).resolves.toBe('TOOL_ERROR');
    await expect(code()).resolves.toBe('CIRCUIT_OPEN');
    now += 30_000;
    healthy = true;
    await expect(code()).resolves.toBe('up');
    await expect(code()).resolves.toBe('up');
    expect(handler).toHaveBeenCalledTimes(6);
  });

  it('lets exactly one trial through when half-open', () => {
    let now = 0;
    const breaker = createCircuitBreaker({ failures: 1, resetAfterMs: 100, now: () => now });
    expect(breaker.state()).toBe('closed');
    breaker.onFailure();
    expect(breaker.state()).toBe('open');
    expect(breaker.tryPass()).toBe(false);
    now = 100;
    expect(breaker.state()).toBe('half-open');
    expect(breaker.tryPass()).toBe(true);
    expect(breaker.tryPass()).toBe(false);
    breaker.onSuccess();
    expect(breaker.state()).toBe('closed');
  });

  it('serves the last good result while open with stale_on_open', async () => {
    let now = 0;
    let healthy = true;
    const tool = createRegistry({ now: () => now }).register({
      name: 's',
      circuit_breaker: { failures: 1, reset_after: 10, stale_on_open: true },
      handler: (args) => { if (!healthy) throw new Error('down'); return { city: args.city, t: now }; },
    });
    await expect(tool.invoke({ city: 'Osaka' }, ctx())).resolves.toEqual({ city: 'Osaka', t: 0 });
    healthy = false;
    now = 5;
    await expect(tool.invoke({ city: 'Osaka' }, ctx())).rejects.toThrow('down');
    await expect(tool.invoke({ city: 'Osaka' }, ctx())).resolves.toEqual({ city: 'Osaka', t: 0 });
    await expect(tool.invoke({ city: 'Kyoto' }, ctx())).rejects.toMatchObject({ code: 'CIRCUIT_OPEN' });
  });

  it('does not count a cancellation as a failure', async () => {
    const tool = createRegistry().register({ name: 'x', circuit_breaker: { failures: 1, reset_after: 10 }, handler: () => new Promise(() => undefined) });
    const controller = new AbortController();
    const call = tool.invoke({}, ctx({ signal: controller.signal }));
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    const second = new AbortController();
    const again = tool.invoke({}, ctx({ signal: second.signal }));
    second.abort();
    await expect(again).rejects.toMatchObject({ code: 'ABORTED' }); // not CIRCUIT_OPEN
  });
});

describe('the registry and its snapshots', () => {
  const def = (name: string, result: unknown = name): ToolDefinition => ({ name, handler: () => result });

  it('returns the same snapshot until something changes', () => {
    const reg = createRegistry();
    const a = reg.current();
    expect(reg.current()).toBe(a);
    reg.register(def('x'));
    const b = reg.current();
    expect(b).not.toBe(a);
    expect(b.version).toBeGreaterThan(a.version);
    expect(a.has('x')).toBe(false);
    expect(b.has('x')).toBe(true);
  });

  it('finds plugin tools by bare and qualified name; code tools replace on re-register', () => {
    const reg = createRegistry();
    reg.setPluginTools('geo', '1.2.0', [def('find_city')]);
    reg.register(def('echo', 1));
    reg.register(def('echo', 2));
    const set = reg.current();
    expect(set.get('geo/find_city')).toBe(set.get('find_city'));
    expect(set.get('find_city')).toMatchObject({ qualifiedName: 'geo/find_city', plugin: 'geo', version: '1.2.0' });
    expect(set.get('echo')!.qualifiedName).toBe('echo');
    expect(set.tools().map((t) => t.qualifiedName)).toEqual(['echo', 'geo/find_city']);
  });

  it('registers a single tool into a plugin with an owner, merging its env', async () => {
    const reg = createRegistry({ env: { A: '1', B: '2' } });
    reg.setPluginTools('p', '1.0.0', [def('one')], ['A']);
    const tool = reg.register({ name: 'two', handler: (_a, c) => ({ ...c.env }) }, { plugin: 'p', version: '1.0.1', env: ['B'] });
    expect(tool).toMatchObject({ qualifiedName: 'p/two', plugin: 'p', version: '1.0.1' });
    expect(reg.current().tools().map((t) => t.qualifiedName)).toEqual(['p/one', 'p/two']);
    await expect(tool.invoke({}, contextFor(tool))).resolves.toEqual({ A: '1', B: '2' });
  });

  it('resolves a shared bare name to the first plugin and warns', () => {
    const reg = createRegistry();
    reg.setPluginTools('a', '1.0.0', [def('lookup', 'a')]);
    reg.setPluginTools('b', '1.0.0', [def('lookup', 'b')]);
    const set = reg.current();
    expect(set.get('lookup')!.plugin).toBe('a');
    expect(set.get('b/lookup')!.plugin).toBe('b');
    expect(set.warnings).toEqual([expect.objectContaining({ code: 'NAME_COLLISION', severity: 'warning' })]);
  });

  it('swaps a plugin atomically: a bad tool changes nothing', () => {
    const reg = createRegistry();
    reg.setPluginTools('p', '1.0.0', [def('one'), def('two')]);
    const before = reg.current();
    let error: unknown;
    try {
      reg.setPluginTools('p', '1.1.0', [def('one'), { name: 'two', parameters: { type: 42 }, handler: () => 1 }]);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'PLUGIN_INVALID', diagnostics: [expect.objectContaining({ pointer: '/tools/1/parameters' })] });
    expect(reg.current()).toBe(before);
  });

  it('remembers the former provider of removed tools and answers unknown names with the closest', () => {
    const reg = createRegistry();
    reg.setPluginTools('geo', '1.0.0', [def('find_city'), def('local_time')]);
    reg.setPluginTools('geo', '1.1.0', [def('find_city')]);
    expect(reg.current().formerProvider('local_time')).toBe('geo');
    reg.setPluginTools('geo', '1.1.0', undefined);
    const set = reg.current();
    expect(set.get('find_city')).toBeUndefined();
    expect(set.formerProvider('geo/find_city')).toBe('geo');
    expect(toolNotFound(set, 'find_city').message).toContain("plugin 'geo'");
    reg.register(def('find_cities'));
    const error = toolNotFound(reg.current(), 'find_citys');
    expect(error.code).toBe('TOOL_NOT_FOUND');
    expect(error.message).toContain('closest: find_cities');
  });

  it('tells listeners about every change and lets them unsubscribe', () => {
    const reg = createRegistry();
    const seen: number[] = [];
    const off = reg.onChange((set) => seen.push(set.tools().length));
    reg.register(def('a'));
    reg.setPluginTools('p', '1.0.0', [def('b'), def('c')]);
    off();
    reg.unregister('a');
    expect(seen).toEqual([1, 3]);
  });

  it('keeps the old handler in a snapshot taken before a swap', async () => {
    const reg = createRegistry();
    reg.setPluginTools('p', '1.0.0', [def('t', 'old')]);
    const held = reg.current();
    reg.setPluginTools('p', '2.0.0', [def('t', 'new')]);
    await expect(held.get('t')!.invoke({}, ctx())).resolves.toBe('old');
    await expect(reg.current().get('t')!.invoke({}, ctx())).resolves.toBe('new');
  });

  it('turns strict-mode schema complaints into warnings', () => {
    const result = createRegistry().setPluginTools('p', '1.0.0', [
      { name: 't', parameters: { type: 'object', requried: ['x'] }, handler: () => 1 },
    ]);
    expect(result.warnings).toEqual([expect.objectContaining({ severity: 'warning', pointer: '/tools/0/parameters' })]);
  });
});

describe('validators cached on disk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolchain-ajv-cache-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a validator loaded from the cache behaves like the one compiled', () => {
    const cache = openDiskCache(dir)!;
    const from: string[] = [];
    const registry = () => createRegistry({ schemas: createSchemaCompiler({ cache, onCompile: (e) => from.push(e.from) }) });
    const compiled = registry().register(weather);
    const loaded = registry().register(weather);
    expect(from).toEqual(['ajv', 'cache']);
    expect(readdirSync(join(dir, 'ajv'))).toHaveLength(1);
    for (const args of [{ city: 'Oslo', days: '2' }, { cty: 'Oslo', unit: 'kelvin', email: 'nope', days: 0 }, {}]) {
      expect(loaded.prepare(args)).toEqual(compiled.prepare(args));
    }
    expect(loaded.prepare({ city: 'Oslo', days: '2' })).toEqual({ ok: true, args: { city: 'Oslo', days: 2, unit: 'metric' } });
    const bad = loaded.prepare({ cty: 'Oslo' });
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).toContain("did you mean 'city'");
  });
});
