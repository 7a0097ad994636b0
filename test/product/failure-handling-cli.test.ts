import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, runCli } from '../helpers/run-cli.js';

// on_failure, finally and compensate through the CLI from bin/ (built by `npm run build`): what
// `validate` says of each new key, a chain test that asserts compensation_failed, and runs on a
// SQLite store that `runs list` and `runs show` then read.

const SAGA = join(REPO, 'test', 'fixtures', 'saga');
const CHAINS = join(SAGA, 'chains');
const PLUGINS = join(SAGA, 'plugins');
const root = mkdtempSync(join(tmpdir(), 'toolchain-saga-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Line {
  readonly line: number;
  readonly code: string;
  readonly message: string;
}

async function validate(file: string): Promise<{ code: number; lines: Line[] }> {
  const out = await runCli(['--plugins', PLUGINS, '--chains', CHAINS, 'validate', join(SAGA, 'bad', file)], { env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache') } });
  const lines = (out.stdout + out.stderr)
    .split('\n')
    .map((l) => /:(\d+):\d+ ([A-Z_]+) (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ line: Number(m[1]), code: m[2]!, message: m[3]! }));
  return { code: out.code, lines };
}

describe('validate: the new keys', () => {
  it('compensate: the tool, its parameters, $.this and $.this_input typed from the step, unknown steps, waits, both kinds, typos', async () => {
    const { code, lines } = await validate('compensate.yaml');
    expect(code).toBe(2);
    expect(lines.map((l) => [l.line, l.code])).toEqual([
      [8, 'UNKNOWN_TOOL'],
      [12, 'MISSING_PARAMETER'],
      [16, 'UNKNOWN_FIELD'],
      [16, 'UNKNOWN_FIELD'],
      [20, 'UNKNOWN_REFERENCE'],
      [23, 'COMPENSATE_NOT_ALLOWED'],
      [27, 'BAD_VALUE'],
      [27, 'UNKNOWN_KEY'],
    ]);
    expect(lines[0]!.message).toContain("(did you mean 'cancel_booking'?)");
    expect(lines[2]!.message).toContain("$.this has no such field (did you mean 'id'?)");
    expect(lines[3]!.message).toContain("$.this_input has no such field (did you mean 'kind'?)");
    expect(lines[7]!.message).toContain("(did you mean 'input_map'?)");
  });

  it('on_failure and finally: names across the lists, what each may read, waits, on_error, compensate, types', async () => {
    const { code, lines } = await validate('handlers.yaml');
    expect(code).toBe(2);
    expect(lines.map((l) => [l.line, l.code])).toEqual([
      [3, 'NAME_COLLISION'],
      [7, 'UNKNOWN_REFERENCE'],
      [10, 'UNKNOWN_TOOL'],
      [14, 'UNKNOWN_PARAMETER'],
      [14, 'UNKNOWN_FIELD'],
      [15, 'HANDLER_CANNOT_WAIT'],
      [18, 'DUPLICATE_NAME'],
      [23, 'BAD_VALUE'],
      [24, 'TYPE_MISMATCH'],
      [25, 'COMPENSATE_NOT_ALLOWED'],
    ]);
    expect(lines[1]!.message).toContain("'$.error' exists only in on_failure and finally steps");
    expect(lines[4]!.message).toContain("$.error has no such field (did you mean 'code'?)");
  });

  it('an empty list, and $.this outside a compensation', async () => {
    const { code, lines } = await validate('empty.yaml');
    expect(code).toBe(2);
    expect(lines.map((l) => [l.line, l.code])).toEqual([
      [6, 'BAD_VALUE'],
      [10, 'UNKNOWN_REFERENCE'],
    ]);
  });

  it('the saga fixture itself is valid', async () => {
    const out = await runCli(['--plugins', PLUGINS, '--chains', CHAINS, 'validate'], { env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache') } });
    expect(out.code, out.stdout + out.stderr).toBe(0);
  });
});

describe('toolchain test', () => {
  it('mocks compensations and handler steps, and asserts compensation_failed and the steps under STEP~compensate', async () => {
    const out = await runCli(['--plugins', PLUGINS, '--chains', CHAINS, 'test', '--json'], { env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache') } });
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const report = JSON.parse(out.stdout) as { passed: number; failed: number; files: { cases: { name: string; passed: boolean; status: string }[] }[] };
    expect(report).toMatchObject({ passed: 3, failed: 0 });
    expect(report.files[0]!.cases.map((c) => [c.name, c.passed, c.status])).toEqual([
      ['no tickets, and the hotel will not cancel', true, 'compensation_failed'],
      ['a cancellation that fails once is retried', true, 'failed'],
      ['a trip that goes well is not undone', true, 'succeeded'],
    ]);
  });

  it('a case whose expectation is wrong fails with the difference', async () => {
    const dir = mkdtempSync(join(root, 'wrong-'));
    const file = join(dir, 'trip.test.yaml');
    const text = readFileSync(join(CHAINS, 'trip.test.yaml'), 'utf8').replace('status: compensation_failed', 'status: failed');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, text));
    const out = await runCli(['--plugins', PLUGINS, '--chains', CHAINS, 'test', file], { env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache') } });
    expect(out.code).toBe(1);
    expect(out.stdout).toContain('✗ no tickets, and the hotel will not cancel');
    expect(out.stdout).toMatch(/status:\s+- expected "failed"\s+\+ actual\s+"compensation_failed"/);
  });

  it('a mock of a compensation the chain does not have is UNKNOWN_STEP, with the closest name', async () => {
    const dir = mkdtempSync(join(root, 'typo-'));
    const file = join(dir, 'trip.test.yaml');
    const text = readFileSync(join(CHAINS, 'trip.test.yaml'), 'utf8').replace('hotel~compensate: { error: HOTEL_CLOSED }', 'hotl~compensate: { error: HOTEL_CLOSED }');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, text));
    const out = await runCli(['--plugins', PLUGINS, '--chains', CHAINS, 'test', file], { env: { TOOLCHAIN_CACHE_DIR: join(root, 'cache') } });
    expect(out.code).toBe(2);
    expect(out.stdout + out.stderr).toContain("has no step 'hotl~compensate' (did you mean 'hotel~compensate'?)");
  });
});

describe('runs on a SQLite store', () => {
  const run = (dir: string, args: readonly string[], env: Record<string, string> = {}) =>
    runCli(['--plugins', PLUGINS, '--chains', CHAINS, ...args], { cwd: dir, env: { TOOLCHAIN_STORE: `sqlite:${join(dir, 'runs.db')}`, TOOLCHAIN_CACHE_DIR: join(root, 'cache'), SAGA_LOG: join(dir, 'effects.log'), ...env } });

  it('a compensation that fails for good: exit 1, the failure said, status compensation_failed in runs list and runs show', async () => {
    const dir = mkdtempSync(join(root, 'failed-comp-'));
    const out = await run(dir, ['run', 'trip', '--input', 'tickets=false', '--run-id', 'trip-1'], { SAGA_FAIL: 'car~compensate' });
    expect(out.code).toBe(1);
    // The run's error first, then what of its handling failed.
    expect(out.stderr).toMatch(/error: TICKETS_UNAVAILABLE no tickets left.*\ncompensation failed: 'car~compensate': FAILED_ON_PURPOSE/);
    const effects = readFileSync(join(dir, 'effects.log'), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { what: string }).what);
    // The others were still undone, the last booked first.
    expect(effects.slice(4)).toEqual([
      'notify trip for ann failed at ticket: TICKETS_UNAVAILABLE',
      'notify flight flight-ann to be cancelled',
      'refund ch-500',
      'cancel hotel-ann',
      'cancel flight-ann',
      'notify release ann: compensation_failed',
      'notify report compensation_failed',
    ]);
    const list = await run(dir, ['runs', 'list', '--status', 'compensation_failed', '--json']);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { run_id: string; status: string }[]).map((r) => [r.run_id, r.status])).toEqual([['trip-1', 'compensation_failed']]);
    const none = await run(dir, ['runs', 'list', '--status', 'failed', '--json']);
    expect(JSON.parse(none.stdout)).toEqual([]);
    const show = await run(dir, ['runs', 'show', 'trip-1']);
    expect(show.stdout).toMatch(/trip-1\s+chain trip\s+compensation_failed/);
    expect(show.stdout).toMatch(/car~compensate\s+failed\s+1\s+\S+\s+FAILED_ON_PURPOSE/);
    expect(show.stdout).toMatch(/notify_ops \(on_failure\)\s+succeeded/);
    expect(show.stdout).not.toContain('~end');
    const json = JSON.parse((await run(dir, ['runs', 'show', 'trip-1', '--json'])).stdout) as { steps: Record<string, { phase?: string }> };
    expect(json.steps['car~compensate']!.phase).toBe('compensate');
    expect(json.steps.release!.phase).toBe('finally');
    expect(json.steps.flight!.phase).toBeUndefined();
    // Fixed (no failure this time), resumed: only the failed compensation runs again, and the run ends failed.
    const again = await run(dir, ['resume', 'trip-1', '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'failed', error: { code: 'TICKETS_UNAVAILABLE', step: 'ticket' } });
    const after = readFileSync(join(dir, 'effects.log'), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { what: string }).what);
    expect(after.slice(effects.length)).toEqual(['cancel car-ann']);
  });

  it('a finally step that fails is said, and changes neither the status nor the exit code', async () => {
    const dir = mkdtempSync(join(root, 'failed-finally-'));
    const out = await run(dir, ['run', 'trip', '--run-id', 'trip-2'], { SAGA_FAIL: 'release' });
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ flight: 'flight-ann', tickets: 2 });
    expect(out.stderr).toContain("warning: finally step 'release' failed: FAILED_ON_PURPOSE");
    const effects = readFileSync(join(dir, 'effects.log'), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { what: string }).what);
    expect(effects.at(-1)).toBe('notify report succeeded');
    const list = JSON.parse((await run(dir, ['runs', 'list', '--json'])).stdout) as { run_id: string; status: string }[];
    expect(list.map((r) => [r.run_id, r.status])).toEqual([['trip-2', 'succeeded']]);
  });

  it('--status rejects a status that is none, naming compensation_failed among them', async () => {
    const dir = mkdtempSync(join(root, 'status-'));
    const out = await run(dir, ['runs', 'list', '--status', 'compensated']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('compensation_failed');
  });
});
