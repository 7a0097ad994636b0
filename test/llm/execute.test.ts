import { describe, expect, it } from 'vitest';
import { executeToolCalls, parseToolCalls, type ToolCallReport, type ToolMessage } from '../../src/llm/index.js';
import type { LogEntry } from '../../src/run-model/events.js';
import type { ApprovalRequest, ToolDefinition } from '../../src/registry/types.js';
import { llmEngine } from '../fixtures/llm/engine.js';

const content = (m: ToolMessage | undefined): any => JSON.parse(m!.content); // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads arbitrary JSON

/** A tool that never settles and never looks at its signal. */
const hang: ToolDefinition = { name: 'hang', timeout: '50ms', handler: () => new Promise(() => undefined) };
/** A tool that waits `ms`, then returns it. */
const nap: ToolDefinition = {
  name: 'nap',
  parameters: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
  handler: async (args, ctx) => {
    ctx.log('napping', { ms: args.ms });
    await new Promise((r) => setTimeout(r, args.ms as number));
    return { slept: args.ms };
  },
};
const big: ToolDefinition = { name: 'big', handler: () => ({ rows: Array.from({ length: 2000 }, (_, i) => ({ i, text: `row number ${i}` })) }) };
let flakyCalls = 0;
const flaky: ToolDefinition = {
  name: 'flaky',
  handler: () => {
    flakyCalls++;
    if (flakyCalls < 3) throw Object.assign(new Error('try again'), { code: 'RATE_LIMITED' });
    return { ok: true, calls: flakyCalls };
  },
};

describe('executeToolCalls', () => {
  it('answers a mixed batch in order, ids matched, errors as results worded for a model', async () => {
    const { engine, seen } = await llmEngine([hang]);
    const calls = [
      { id: 'c_ok', name: 'alpha__lookup', arguments: { key: 'osaka', limit: null, mode: null } },
      { id: 'c_unknown', name: 'lookpu', arguments: {} },
      { id: 'c_invalid', name: 'sum', arguments: { a: 'two', c: 3 } },
      { id: 'c_timeout', name: 'hang', arguments: {} },
      { id: 'c_chain', name: 'brief', arguments: { key: 'kyoto' } },
      { id: 'c_danger', name: 'wipe', arguments: { really: true } },
      { id: 'c_chain2', name: 'chain__sum', arguments: { a: '21' } },
    ];
    const answers = await executeToolCalls(engine, calls, { runId: 'run-7' });

    expect(answers.map((a) => [a.role, a.tool_call_id, a.is_error])).toEqual([
      ['tool', 'c_ok', false],
      ['tool', 'c_unknown', true],
      ['tool', 'c_invalid', true],
      ['tool', 'c_timeout', true],
      ['tool', 'c_chain', false],
      ['tool', 'c_danger', true],
      ['tool', 'c_chain2', false],
    ]);
    // Success: nulls for optional properties (strict mode) became "absent", so the default applied.
    expect(content(answers[0])).toEqual({ source: 'alpha', key: 'osaka', limit: 10 });
    expect(seen.find((s) => s.tool === 'alpha/lookup' && s.step === 'c_ok')).toMatchObject({ run_id: 'run-7', attempt: 1 });

    const unknown = content(answers[1]).error;
    expect(unknown.code).toBe('TOOL_NOT_FOUND');
    expect(unknown.message).toBe("unknown tool 'lookpu'; closest: alpha__lookup, beta__lookup, wipe");

    const invalid = content(answers[2]).error;
    expect(invalid.code).toBe('VALIDATION_FAILED');
    expect(invalid.message).toContain("Invalid arguments for tool 'sum'");
    expect(invalid.message).toMatch(/'a' must be integer, but got string "two"/);
    expect(invalid.message).toMatch(/missing required property 'b'/);
    expect(invalid.message).toMatch(/unknown property 'c'/);

    expect(content(answers[3]).error).toEqual({ code: 'TIMEOUT', message: "tool 'hang' timed out after 50 ms (attempt 1)" });
    expect(content(answers[4])).toEqual({ found: 'kyoto', loud: false });
    expect(content(answers[5]).error.code).toBe('APPROVAL_DENIED');
    expect(seen.some((s) => s.tool === 'beta/wipe')).toBe(false);
    expect(content(answers[6])).toEqual({ total: 42 });
  });

  it('runs calls concurrently', async () => {
    // Each call waits until all four have started: run one at a time, they would never end.
    let started = 0;
    let all: () => void = () => undefined;
    const together = new Promise<void>((resolve) => (all = resolve));
    const meet: ToolDefinition = { name: 'meet', handler: async () => { if (++started === 4) all(); await together; return { met: started }; } };
    const { engine } = await llmEngine([meet]);
    const answers = await executeToolCalls(engine, [1, 2, 3, 4].map((i) => ({ id: `n${i}`, name: 'meet', arguments: {} })));
    expect(answers.every((a) => !a.is_error)).toBe(true);
    expect(started).toBe(4);
  });

  it('takes parseToolCalls output directly, and arguments as JSON text', async () => {
    const { engine } = await llmEngine();
    const { calls } = parseToolCalls('<tool>sum</tool><args>{“a”：1，“b”：2}</args> {"name": "beta/lookup", "arguments": {"key": "x"}}');
    const answers = await executeToolCalls(engine, [...calls, { id: 'raw', name: 'sum', arguments: '{"a": 5, "b": 5}' }, { name: 'sum', arguments: '{"a": 5,' }]);
    expect(answers.map((a) => a.tool_call_id)).toEqual(['call_1', 'call_2', 'raw', 'call_4']);
    expect(content(answers[0])).toEqual({ total: 3 });
    expect(content(answers[1])).toEqual({ source: 'beta', key: 'x', limit: 10 });
    expect(content(answers[2])).toEqual({ total: 10 });
    expect(answers[3]!.is_error).toBe(true);
    expect(content(answers[3]).error.message).toMatch(/not valid JSON/);
  });

  it('asks approve for dangerous tools with the call id as the step, and runs them when approved', async () => {
    const { engine, seen } = await llmEngine();
    const asked: ApprovalRequest[] = [];
    const answers = await executeToolCalls(engine, [{ id: 'w1', name: 'wipe', arguments: { really: true } }, { id: 'w2', name: 'wipe', arguments: { really: false } }], {
      runId: 'r1',
      approve: (req) => {
        asked.push(req);
        return req.args.really === true;
      },
    });
    expect(asked.map((r) => [r.tool, r.step, r.run_id])).toEqual([
      ['beta/wipe', 'w1', 'r1'],
      ['beta/wipe', 'w2', 'r1'],
    ]);
    expect(content(answers[0])).toEqual({ wiped: true });
    expect(content(answers[1]).error.code).toBe('APPROVAL_DENIED');
    expect(seen.filter((s) => s.tool === 'beta/wipe')).toHaveLength(1);
  });

  it("answers a chain's bad input in the registry's words, and a chain's failure with its step", async () => {
    const failing: ToolDefinition = { name: 'boom', handler: () => Promise.reject(Object.assign(new Error('exploded'), { code: 'BOOM' })) };
    const { engine } = await llmEngine([failing]);
    engine.addChain('name: fragile\ndescription: Fails.\nsteps:\n  - name: bang\n    tool: boom\n');
    const answers = await executeToolCalls(engine, [
      { id: 'a', name: 'brief', arguments: { loud: 'yes please' } },
      { id: 'b', name: 'fragile', arguments: {} },
      { id: 'c', name: 'boom', arguments: {} },
    ]);
    const bad = content(answers[0]).error;
    expect(bad.code).toBe('VALIDATION_FAILED');
    expect(bad.message).toContain("Invalid arguments for tool 'brief' (2 problems)");
    expect(bad.message).toContain("missing required property 'key' (string)");
    expect(content(answers[1]).error).toEqual({ code: 'BOOM', message: "chain 'fragile' failed at step 'bang': exploded" });
    expect(content(answers[2]).error).toEqual({ code: 'BOOM', message: 'exploded' });
  });

  it('cuts results over maxResultChars into valid JSON with a visible marker', async () => {
    const { engine } = await llmEngine([big]);
    const [answer] = await executeToolCalls(engine, [{ id: 'b', name: 'big', arguments: {} }], { maxResultChars: 2000 });
    expect(answer!.is_error).toBe(false);
    expect(answer!.content.length).toBeLessThanOrEqual(2000);
    const cut = content(answer);
    expect(cut.truncated).toBe(true);
    expect(cut.original_chars).toBeGreaterThan(50_000);
    expect(cut.value.rows.length).toBeGreaterThan(10);
    expect(cut.value.rows[0]).toEqual({ i: 0, text: 'row number 0' });
  });

  it('runs at most `concurrency` calls at once, starting them in the order given', async () => {
    let active = 0;
    let most = 0;
    const order: number[] = [];
    const busy: ToolDefinition = {
      name: 'busy',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      handler: async (args) => {
        order.push(args.n as number);
        most = Math.max(most, ++active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
        return { n: args.n };
      },
    };
    const { engine } = await llmEngine([busy]);
    const answers = await executeToolCalls(engine, [1, 2, 3, 4, 5, 6].map((n) => ({ id: `b${n}`, name: 'busy', arguments: { n } })), { concurrency: 2 });
    expect(answers.map((a) => a.tool_call_id)).toEqual(['b1', 'b2', 'b3', 'b4', 'b5', 'b6']);
    expect(most).toBe(2);
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
    await expect(executeToolCalls(engine, [], { concurrency: 0 })).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('cancels running calls with the signal, and answers calls made after it with ABORTED', async () => {
    const { engine } = await llmEngine([nap]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    // A nap far past the test's timeout: only the signal can end it.
    const answers = await executeToolCalls(engine, [{ id: 'long', name: 'nap', arguments: { ms: 600_000 } }], { signal: controller.signal });
    expect(content(answers[0]).error.code).toBe('ABORTED');
    const late = await executeToolCalls(engine, [{ id: 'x', name: 'sum', arguments: { a: 1, b: 2 } }], { signal: controller.signal });
    expect(content(late[0]).error.code).toBe('ABORTED');
  });

  it('retries when asked, passes ctx.log lines on, and reports each call', async () => {
    flakyCalls = 0;
    const { engine } = await llmEngine([flaky, nap]);
    const logs: LogEntry[] = [];
    const reports: ToolCallReport[] = [];
    const answers = await executeToolCalls(
      engine,
      [
        { id: 'f', name: 'flaky', arguments: {} },
        { id: 'n', name: 'nap', arguments: { ms: 1 } },
        { id: 'u', name: 'nope', arguments: {} },
      ],
      { retry: { maxAttempts: 3, initialMs: 1 }, runId: 'r2', log: (e) => logs.push(e), onCall: (r) => reports.push(r) },
    );
    expect(content(answers[0])).toEqual({ ok: true, calls: 3 });
    expect(logs).toEqual([expect.objectContaining({ run_id: 'r2', step: 'n', attempt: 1, message: 'napping', fields: { ms: 1 } })]);
    const byId = Object.fromEntries(reports.map((r) => [r.id, r]));
    expect(byId.f).toMatchObject({ name: 'flaky', target: { kind: 'tool', name: 'flaky' }, is_error: false, attempts: 3 });
    expect(byId.u).toMatchObject({ name: 'nope', is_error: true, code: 'TOOL_NOT_FOUND', attempts: 0 });
    expect(byId.u).not.toHaveProperty('target');
  });

  it('rejects only for bad options, and answers malformed calls', async () => {
    const { engine } = await llmEngine();
    await expect(executeToolCalls(engine, [], { maxResultChars: 0 })).rejects.toThrow(/maxResultChars/);
    await expect(executeToolCalls(engine, [], { retry: { maxAttempts: 0 } })).rejects.toThrow(/retry.maxAttempts/);
    const odd = [null, { id: 'x' }, { id: 'y', name: 'sum', arguments: [1, 2] }] as unknown as Parameters<typeof executeToolCalls>[1];
    const answers = await executeToolCalls(engine, odd);
    expect(answers.map((a) => [a.tool_call_id, a.is_error])).toEqual([
      ['call_1', true],
      ['x', true],
      ['y', true],
    ]);
    expect(content(answers[2]).error.message).toMatch(/must be a JSON object/);
  });
});
