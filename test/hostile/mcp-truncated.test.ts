import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir, waitFor, writeFiles } from '../fixtures/plugins/helpers.js';
import { REPO } from '../helpers/run-cli.js';

// A `truncate: true` tool's result over the registry's size limit is cut and wrapped once,
// `{ truncated, original_bytes, value }`. Over MCP, where answers are also held to the tool-message
// limit, that wrapper was wrapped again (`{ truncated, original_chars, value: { truncated, … } }`):
// now it is cut further inside its own wrapper.

let dir: string;
beforeAll(async () => {
  dir = await tempDir('toolchain-mcp-truncated-');
  await writeFiles(dir, {
    'plugins/big/plugin.yaml': 'name: big\nversion: 1.0.0\ntools:\n  - name: huge\n    truncate: true\n    handler: tools/huge.js\n    parameters: { type: object }\n  - name: long\n    handler: tools/huge.js#long\n    parameters: { type: object }\n',
    'plugins/big/tools/huge.js': "export default () => ({ text: 'x'.repeat(3 * 1024 * 1024) });\nexport const long = () => ({ text: 'y'.repeat(50_000) });\n",
    'chains/.keep': '',
  });
});
afterAll(() => removeDir(dir));

describe('a truncated result over MCP', () => {
  it('is wrapped once, its value cut to fit', async () => {
    const child = spawn(process.execPath, [join(REPO, 'bin', 'toolchain.js'), 'mcp', '--no-watch', '--chains', join(dir, 'chains'), '--plugins', join(dir, 'plugins')], { cwd: dir });
    const lines: Record<string, unknown>[] = [];
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      pending += text;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        lines.push(JSON.parse(pending.slice(0, nl)) as Record<string, unknown>);
        pending = pending.slice(nl + 1);
      }
    });
    const send = (m: object): void => void child.stdin.write(`${JSON.stringify(m)}\n`);
    const reply = (id: number): Promise<Record<string, unknown>> =>
      waitFor(() => {
        const found = lines.find((l) => l.id === id);
        if (!found) throw new Error('not yet');
        return found;
      }, 20_000);
    try {
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      await reply(1);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'huge', arguments: {} } });
      send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'long', arguments: {} } });
      const huge = (await reply(2)).result as { content: { text: string }[]; structuredContent: Record<string, unknown>; isError?: boolean };
      expect(huge.isError).toBeFalsy();
      const read = JSON.parse(huge.content[0]!.text) as Record<string, unknown>;
      expect(Object.keys(read).sort()).toEqual(['original_bytes', 'truncated', 'value']);
      expect(read.truncated).toBe(true);
      expect(read.original_bytes).toBeGreaterThan(3 * 1024 * 1024);
      // The value is the tool's own (cut), not a second wrapper.
      expect(Object.keys(read.value as object)).toEqual(['text']);
      expect(huge.structuredContent).toEqual(read);
      // A result cut only by the tool-message limit keeps its one wrapper as before.
      const long = JSON.parse(((await reply(3)).result as { content: { text: string }[] }).content[0]!.text) as Record<string, unknown>;
      expect(Object.keys(long).sort()).toEqual(['original_chars', 'truncated', 'value']);
      expect(Object.keys(long.value as object)).toEqual(['text']);
    } finally {
      child.kill();
    }
  }, 40_000);
});
