import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/index.js';
import { printable, printableJson } from '../../src/common/printable.js';
import { runCli } from '../helpers/run-cli.js';

// Text from chain files, tools and models reached the terminal as it was: an
// ANSI or OSC escape in a key name or an error message could rewrite the screen, plant a link or
// set the clipboard; bidi overrides could make a line read differently; a newline split one
// diagnostic into two. Diagnostics and error lines now show such characters as visible escapes.

// Every character a terminal or a bidi-aware viewer would act on.
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolchain-terminal-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('diagnostics are inert text', () => {
  it('escape sequences, NUL, bidi overrides and newlines come out as visible escapes', () => {
    const hostile = 'a\u001b]8;;http://evil\u0007link\u001b]8;;\u0007 \u001b[2J\u001b[31mred\u0000 \u202eevil\u202c\nsecond line\u2028x';
    const line = formatDiagnostic({ code: 'TOOL_ERROR', severity: 'error', message: hostile, file: 'c\u001b[0m.yaml', line: 1, col: 2 });
    expect(line).not.toMatch(CONTROL);
    expect(line).not.toContain('\n');
    expect(line).toContain('\\u{001b}[2J');
    expect(line).toContain('\\u{202e}evil');
    expect(line).toContain('\\nsecond line');
    expect(printable('plain text, ünïcödé and emoji 🙂 stay as they are')).toBe('plain text, ünïcödé and emoji 🙂 stay as they are');
  });

  it('validate prints a key name holding an OSC 52 clipboard write as escaped text, on one line', async () => {
    const chains = join(dir, 'chains');
    await import('node:fs/promises').then((fs) => fs.mkdir(chains, { recursive: true }));
    await writeFile(join(chains, 'c.yaml'), 'name: c\nsteps:\n  - name: s\n    tool: t\n    "\\e]52;c;cm0gLXJmIH4=\\a\\nX": 1\n');
    const out = await runCli(['validate', '--chains', chains, '--plugins', join(dir, 'none')]);
    expect(out.code).toBe(2);
    expect(out.stdout).not.toMatch(CONTROL);
    const lines = out.stdout.trim().split('\n');
    expect(lines.filter((l) => l.includes('UNKNOWN_KEY'))).toHaveLength(1);
    expect(out.stdout).toContain('\\u{001b}]52;c;');
  });
});

describe('JSON for a terminal', () => {
  it('writes every control and bidi character as an escape, and reads back as the same value', () => {
    const value = { 'k\u202e': ['\u001b[2J', '\u009b', '\u2066x\u2069', '\u2028', 'plain ünïcödé 🙂'] };
    const text = printableJson(value, 2);
    expect(text).not.toMatch(CONTROL);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('--input-file has a size cap', () => {
  it('an endless file (/dev/zero) fails with INPUT_INVALID instead of filling memory', async () => {
    const out = await runCli(['run', 'city_brief', '--input-file', '/dev/zero']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('INPUT_INVALID');
    expect(out.stderr).toContain('more than 16777216 bytes');
  });

  it('standard input past the cap fails the same way', async () => {
    const out = await runCli(['run', 'city_brief', '--input-file', '-'], { input: `{"question": "${'x'.repeat(17 * 1024 * 1024)}"}` });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('INPUT_INVALID');
  });

  it('a normal input file is still read', async () => {
    await writeFile(join(dir, 'in.json'), '{"question": "time in Osaka?"}');
    const out = await runCli(['run', 'city_brief', '--input-file', join(dir, 'in.json')]);
    expect(out.code, out.stderr).toBe(0);
  });
});

// Round two: what a run recorded (an error message from a tool, its output, a run's error) was
// printed raw by `runs show` and `runs list`: anyone who can start a run, over HTTP too, could
// rewrite the terminal of whoever inspects it. Every print of recorded text is escaped.
describe('recorded text is inert when the CLI prints it', () => {
  const HOSTILE = 'boom \u001b]52;c;cm0gLXJmIH4=\u0007 \u001b[2J\u009b31m \u202eevil\u202c \u2066iso\u2069';
  let project: string;
  let runId: string;
  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'toolchain-recorded-'));
    const fs = await import('node:fs/promises');
    await fs.mkdir(join(project, 'chains'), { recursive: true });
    await fs.mkdir(join(project, 'plugins', 'bad', 'tools'), { recursive: true });
    await writeFile(join(project, 'plugins', 'bad', 'plugin.yaml'), 'name: bad\nversion: 1.0.0\ntools:\n  - name: shout\n    handler: tools/shout.js\n  - name: say\n    handler: tools/say.js\n');
    await writeFile(join(project, 'plugins', 'bad', 'tools', 'shout.js'), `export default () => { const e = new Error(${JSON.stringify(HOSTILE)}); e.code = 'E\\u001b[31mVIL'; throw e; };\n`);
    await writeFile(join(project, 'plugins', 'bad', 'tools', 'say.js'), `export default () => ({ text: ${JSON.stringify(HOSTILE)} });\n`);
    await writeFile(join(project, 'chains', 'loud.yaml'), 'name: loud\nsteps:\n  - name: said\n    tool: say\n  - name: shouted\n    tool: shout\n    depends_on: [said]\n');
    await writeFile(join(project, 'chains', 'quiet.yaml'), 'name: quiet\nsteps:\n  - name: said\n    tool: say\noutputs: { text: $.said.text }\n');
    const failed = await runCli(['run', 'loud'], { cwd: project });
    expect(failed.code).toBe(1);
    expect(failed.stderr).not.toMatch(CONTROL);
    runId = /run ([0-9a-f-]{36})/.exec(failed.stderr)![1]!;
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  it('runs show, as a table and as JSON', async () => {
    const table = await runCli(['runs', 'show', runId], { cwd: project });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('\\u{001b}]52;c;');
    expect(table.stdout).toContain('\\u{202e}evil');
    expect(table.stdout).not.toMatch(CONTROL);
    const json = await runCli(['runs', 'show', runId, '--json'], { cwd: project });
    expect(json.stdout).not.toMatch(CONTROL);
    // The same JSON value: the escapes are JSON's own.
    const detail = JSON.parse(json.stdout) as { error: { message: string } };
    expect(detail.error.message).toContain(HOSTILE);
  });

  it('runs list, as a table and as JSON', async () => {
    for (const args of [['runs', 'list'], ['runs', 'list', '--json']]) {
      const out = await runCli(args, { cwd: project });
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(runId);
      expect(out.stdout).not.toMatch(CONTROL);
    }
  });

  it("run prints a tool's output as escaped JSON", async () => {
    const out = await runCli(['run', 'quiet'], { cwd: project });
    expect(out.code).toBe(0);
    expect(out.stdout).not.toMatch(CONTROL);
    expect((JSON.parse(out.stdout) as { text: string }).text).toBe(HOSTILE);
  });
});
