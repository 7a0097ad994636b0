import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { REPO, runCli } from '../helpers/run-cli.js';

// `toolchain graph CHAIN --format svg|png`: the DAG drawn with the inspector's layout, without a server.

const FIXTURES = join(REPO, 'test', 'fixtures');
const chains = join(FIXTURES, 'valid');
const PLUGINS = join(FIXTURES, 'cli-plugins');

describe('toolchain graph --format svg|png', () => {
  it('draws an SVG with a box per step and an arrow per edge, order-only edges dashed', async () => {
    const { code, stdout } = await runCli(['graph', 'diamond', '--format', 'svg', '--chains', chains, '--plugins', PLUGINS]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="\d+" height="\d+"/);
    expect(stdout).not.toMatch(/<script|href="http/);
    for (const step of ['a', 'b', 'c', 'd', 'e']) expect(stdout).toContain(`font-weight="bold">${step}</text>`);
    expect(stdout.match(/<rect x=/g)).toHaveLength(5);
    expect(stdout.match(/marker-end="url\(#arrow\)"/g)).toHaveLength(6);
    const mermaid = (await runCli(['graph', 'diamond', '--format', 'mermaid', '--chains', chains, '--plugins', PLUGINS])).stdout;
    expect(stdout.match(/stroke-dasharray/g)?.length ?? 0).toBe(mermaid.match(/-\.->/g)?.length ?? 0);
  });

  it('escapes what a chain says inside its labels', async () => {
    const { stdout } = await runCli(['graph', 'city_brief', '--format', 'svg', '--chains', chains, '--plugins', PLUGINS]);
    expect(stdout).toContain('when $.locate.confidence &#62;= 0.5');
  });

  it('writes a PNG at twice the SVG size to a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-graph-'));
    const file = join(dir, 'diamond.png');
    const { code } = await runCli(['graph', 'diamond', '--format', 'png', '-o', file, '--chains', chains, '--plugins', PLUGINS]);
    expect(code).toBe(0);
    const png = await readFile(file);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const svg = (await runCli(['graph', 'diamond', '--format', 'svg', '--chains', chains, '--plugins', PLUGINS])).stdout;
    const [, width, height] = /width="(\d+)" height="(\d+)"/.exec(svg)!;
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([2 * Number(width), 2 * Number(height)]);
  });

  it('refuses to write a PNG to a terminal', async () => {
    const stdout = Object.assign(new PassThrough(), { isTTY: true });
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await main(['graph', 'diamond', '--format', 'png', '--chains', chains, '--plugins', PLUGINS], { stdout, stderr, stdin: new PassThrough(), cwd: REPO, env: {} });
    expect(code).toBe(2);
    expect(err).toMatch(/USAGE a PNG is not for a terminal/);
  });
});
