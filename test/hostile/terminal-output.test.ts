import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/index.js';
import { printable } from '../../src/common/printable.js';
import { runCli } from '../helpers/run-cli.js';

// Issue 14, item 11: text from chain files, tools and models reached the terminal as it was: an
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
