import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { runCli, STACK_LINE } from '../helpers/run-cli.js';

// Plugin code with `isolation: none` (in the engine's own thread): a handler cannot
// change another step's data or the run's input, and the CLI does not let it end or crash the
// process, or leave a run that never ends without a word. (The `rogue` fixture plugin misbehaves
// on purpose; its manifest asks for no isolation.)

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'isolation');
const PLUGINS = join(FIXTURE, 'plugins');
const cli = (args: string[]) => runCli([...args, '--chains', join(FIXTURE, 'chains'), '--plugins', PLUGINS], { cwd: FIXTURE });

describe('arguments are the handler\'s own copy', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ pluginsDir: PLUGINS, cache: 'off' });
    engine.addChain(`name: mutations
inputs: { data: object }
steps:
  - name: a
    tool: echo
    input_map: { list: [1, 2], nested: { deep: { x: 1 } } }
  - name: m
    tool: mutate
    input_map: { from_step: $.a.args, from_input: $.data, whole: $.a }
  - name: t
    tool: mutate_typed
    input_map: { d: $.a.args }
  - name: f
    tool: mutate
    for_each: $.a.args.list
    input_map: { item: $.item, all: $.a.args.list }
  - name: c
    tool: echo
    input_map: { step: $.a.args, input: $.data }
outputs: { seen: $.c.args, a: $.a.args }
`);
  });
  afterAll(() => engine.close());

  it("a handler that mutates its arguments changes neither an earlier step's output nor the run's input", async () => {
    const input = { data: { keep: ['me'], inner: { y: 2 } } };
    const result = await engine.run('mutations', input);
    expect(result.status).toBe('succeeded');
    const clean = { list: [1, 2], nested: { deep: { x: 1 } } };
    expect(result.outputs).toEqual({ seen: { step: clean, input: { keep: ['me'], inner: { y: 2 } } }, a: clean });
    expect(input).toEqual({ data: { keep: ['me'], inner: { y: 2 } } });
  });
});

describe('the CLI keeps the process', () => {
  it("process.exit(0) in a handler fails the run with TOOL_CRASHED naming the tool, instead of a silent exit 0", async () => {
    const out = await cli(['run', 'quits']);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain("error: TOOL_CRASHED tool 'rogue/quit' called process.exit(0)");
    expect(out.stderr).toContain("(step 's')");
  });

  it('an exception thrown from a timer while the run is in flight is logged with the plugin named; the run finishes', async () => {
    const out = await cli(['run', 'late_throw']);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ slept: 200 });
    expect(out.stderr).toContain("warning: an uncaught exception from plugin 'rogue': thrown from a timer after returning; ignored");
    expect(out.stderr).not.toMatch(STACK_LINE);
  });

  it('an unhandled rejection while the run is in flight is logged with the plugin named; the run finishes', async () => {
    const out = await cli(['run', 'late_reject']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("warning: an unhandled rejection from plugin 'rogue': rejected after returning; ignored");
  });

  it('a step without a timeout whose tool never settles is reported as TOOL_STALLED, not a silent exit 13', async () => {
    const out = await cli(['run', 'hangs']);
    expect(out.code).toBe(1);
    expect(out.stderr.trim().replace(/^run \S+\n/, '')).toBe("error: TOOL_STALLED step 's' (tool 'never') never settled, and nothing else was left to wait for; give the step a timeout");
  });

  it('a tool waiting only for its signal, with no timeout, is reported the same way (and gets its signal)', async () => {
    const out = await cli(['run', 'waits_for_signal', '--json']);
    expect(out.code).toBe(1);
    const result = JSON.parse(out.stdout) as { error: { code: string; message: string }; steps: Record<string, { status: string }> };
    expect(result.error.code).toBe('TOOL_STALLED');
    expect(result.error.message).toContain("step 'w' (tool 'patient')");
    expect(result.steps.w?.status).toBe('failed');
  });

  it('--isolation worker contains the same handlers: a spinning tool times out and the run ends at once', async () => {
    // The tool spins for ever: without the timeout, the command would never end.
    const out = await cli(['run', 'spins', '--isolation', 'worker']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("error: TIMEOUT tool 'rogue/spin' timed out after 300 ms");
    const bad = await cli(['run', 'spins', '--isolation', 'threads']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("error: USAGE --isolation must be none, worker or process, got 'threads'");
  });
});
