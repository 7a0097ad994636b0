import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIO } from '../../src/cli/io.js';

const PROJECT = join(import.meta.dirname, '..', 'fixtures', 'llm', 'project');
const DIRS = ['--chains', join(PROJECT, 'chains'), '--plugins', join(PROJECT, 'plugins')];

async function cli(args: readonly string[], dirs: readonly string[] = DIRS) {
  const out = { stdout: '', stderr: '' };
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const stdin = new PassThrough();
  stdin.end();
  const io: CliIO = { stdout, stderr, stdin, cwd: PROJECT, env: {} };
  const code = await main([...dirs, 'tools', 'export', ...args], io);
  return { code, ...out };
}

const temp: string[] = [];
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

describe('toolchain tools export', () => {
  it('prints OpenAI function definitions by default: tools, then chains, colliding names prefixed', async () => {
    const r = await cli([]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const tools = JSON.parse(r.stdout);
    expect(tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['alpha__lookup', 'beta__lookup', 'wipe', 'brief']);
    expect(tools[0]).toEqual({
      type: 'function',
      function: {
        name: 'alpha__lookup',
        description: 'Look a key up in alpha.',
        parameters: {
          type: 'object',
          additionalProperties: false,
          required: ['key'],
          properties: { key: { type: 'string', description: 'What to look up.' }, limit: { type: 'integer', default: 10 } },
        },
      },
    });
    expect(tools[3].function).toMatchObject({ name: 'brief', description: 'Look a key up in alpha and report it.', parameters: { required: ['key'] } });
  });

  it('--format anthropic --tools-only and --format mcp --chains-only', async () => {
    const anthropic = await cli(['--format', 'anthropic', '--tools-only']);
    expect(anthropic.code).toBe(0);
    expect(JSON.parse(anthropic.stdout).map((t: { name: string }) => t.name)).toEqual(['alpha__lookup', 'beta__lookup', 'wipe']);
    expect(JSON.parse(anthropic.stdout)[1]).toEqual({ name: 'beta__lookup', description: 'Look a key up in beta.', input_schema: { type: 'object', required: ['key'], properties: { key: { type: 'string' } } } });
    const mcp = await cli(['--format', 'mcp', '--chains-only']);
    expect(JSON.parse(mcp.stdout)).toEqual([
      {
        name: 'brief',
        title: 'chain brief',
        description: 'Look a key up in alpha and report it.',
        inputSchema: { type: 'object', properties: { key: { type: 'string', description: 'The key.' } }, required: ['key'], additionalProperties: false },
        // Inferred from the chain's outputs; the tool behind `found` declares no `returns`.
        outputSchema: { type: 'object', properties: { found: {} } },
      },
    ]);
  });

  it('--strict converts what it faithfully can', async () => {
    const r = await cli(['--strict']);
    const strict = Object.fromEntries(JSON.parse(r.stdout).map((t: { function: { name: string; strict: boolean } }) => [t.function.name, t.function.strict]));
    expect(strict).toEqual({ alpha__lookup: true, beta__lookup: true, wipe: false, brief: true });
  });

  it('bad usage exits 2 with one line', async () => {
    const both = await cli(['--chains-only', '--tools-only']);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('error: USAGE --chains-only and --tools-only exclude each other\n');
    const format = await cli(['--format', 'gemini']);
    expect(format.code).toBe(2);
    expect(format.stderr).toMatch(/Allowed choices are openai, anthropic, mcp/);
    expect((await cli(['--format', 'mcp', '--strict'])).code).toBe(2);
  });

  it('leaves out what fails to load, with a warning, and exports the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolchain-export-'));
    temp.push(dir);
    mkdirSync(join(dir, 'plugins', 'broken'), { recursive: true });
    writeFileSync(join(dir, 'plugins', 'broken', 'plugin.yaml'), 'name: broken\nversion: 1.0.0\ntools:\n  - name: x\n    parameters: [not, a, schema]\n');
    mkdirSync(join(dir, 'chains'));
    writeFileSync(join(dir, 'chains', 'bad.yaml'), 'name: bad\nsteps: []\n');
    const r = await cli([], ['--chains', join(dir, 'chains'), '--plugins', join(dir, 'plugins')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    const warnings = r.stderr.trim().split('\n');
    expect(warnings).toHaveLength(2);
    for (const w of warnings) expect(w).toMatch(/^warning: .*\(left out of the export\)$/);
    expect(r.stderr).toMatch(/bad\.yaml:\d+:\d+ /);
    expect(r.stderr).toMatch(/plugin 'broken' is /);
  });
});
