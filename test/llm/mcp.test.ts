import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, connectMcp, REVERSE_TOOL, writeProject, type Connected } from '../fixtures/llm-agent/mcp-project.js';
import { removeDir, tempDir, waitFor } from '../fixtures/plugins/helpers.js';

// `toolchain mcp` driven by the MCP SDK's own client over a real child process:
// list, call a tool, call a chain, error results, and a notification when hot reload changes the set.

let root: string;
let mcp: Connected;
let listChanged = 0;

beforeAll(async () => {
  await buildCli();
  root = await tempDir('toolchain-mcp-');
  await writeProject(root);
  mcp = await connectMcp(root);
  mcp.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });
}, 180_000);

afterAll(async () => {
  await mcp?.close();
  if (root) await removeDir(root);
});

describe('toolchain mcp', () => {
  it('announces tools with list_changed support', () => {
    expect(mcp.client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true } });
    expect(mcp.client.getServerVersion()?.name).toBe('toolchain');
  });

  it('lists every tool and chain with its input schema', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'noop', 'shout']);
    const echo = tools.find((t) => t.name === 'echo')!;
    expect(echo.description).toBe('Echo a text back, optionally shouted.');
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    const shout = tools.find((t) => t.name === 'shout')!;
    expect(shout.description).toBe('Shout a text twice.');
    expect(shout.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    // What a call's structured content holds: the tool's `returns`, the chain's inferred outputs;
    // nothing for a tool that does not say. The SDK client checks every call below against them.
    expect(echo.outputSchema).toEqual({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(shout.outputSchema).toEqual({ type: 'object', properties: { shouted: { type: 'string' } } });
    expect(tools.find((t) => t.name === 'noop')!.outputSchema).toBeUndefined();
  });

  it('calls a tool: JSON text and structured content (and a handler’s console.log stays off stdout)', async () => {
    const result = await mcp.client.callTool({ name: 'echo', arguments: { text: 'hi', loud: true } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ text: 'HI' });
    expect(result.content).toEqual([{ type: 'text', text: '{"text":"HI"}' }]);
    await waitFor(() => mcp.stderr().includes('a handler printing to stdout'));
  });

  it('calls a chain: its outputs', async () => {
    const result = await mcp.client.callTool({ name: 'shout', arguments: { text: 'hey' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ shouted: 'HEY HEY' });
  });

  it('answers bad arguments with an isError result a model can act on', async () => {
    const result = await mcp.client.callTool({ name: 'echo', arguments: { txt: 'hi', loud: 'maybe' } });
    expect(result.isError).toBe(true);
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    expect(text).toMatch(/^VALIDATION_FAILED: Invalid arguments for tool 'echo'/);
    expect(text).toContain("missing required property 'text'");
    expect(text).toContain("unknown property 'txt' (did you mean 'text'?)");
    expect(text).toContain("'loud' must be boolean");
    // echo has an output schema, which an `{ error }` would not match: the text says it all.
    expect(result.structuredContent).toBeUndefined();

    const chain = await mcp.client.callTool({ name: 'shout', arguments: {} });
    expect(chain.isError).toBe(true);
    expect((chain.content as { text: string }[])[0]!.text).toContain("missing required property 'text'");
  });

  it('answers an unknown name with the closest names, as a result rather than a protocol error', async () => {
    const result = await mcp.client.callTool({ name: 'ecko', arguments: {} });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toMatch(/TOOL_NOT_FOUND: unknown tool 'ecko'.*closest: echo/);
  });

  it('sends notifications/tools/list_changed when a plugin edit changes the set', async () => {
    const before = listChanged;
    await appendFile(join(root, 'plugins', 'demo', 'plugin.yaml'), REVERSE_TOOL);
    await waitFor(() => listChanged > before, 15_000, 25);
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'noop', 'reverse', 'shout']);
    const result = await mcp.client.callTool({ name: 'reverse', arguments: { text: 'abc' } });
    expect(result.structuredContent).toEqual({ text: 'cba' });
  }, 20_000);

  it('sends it too when a chain file is added', async () => {
    const before = listChanged;
    await writeFile(join(root, 'chains', 'whisper.yaml'), 'name: whisper\ninputs: { text: string }\nsteps:\n  - name: say\n    tool: echo\n    input_map: { text: $.text }\n');
    await waitFor(() => listChanged > before, 15_000, 25);
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name)).toContain('whisper');
  }, 20_000);

  it('keeps stdout for the protocol: everything else went to stderr', () => {
    expect(mcp.stderr()).toContain('toolchain mcp: serving 2 tools and 1 chains');
  });
});
