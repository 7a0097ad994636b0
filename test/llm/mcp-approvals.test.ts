import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { openStore } from '../../src/entry/store.js';
import { buildCli, REPO } from '../fixtures/llm-agent/mcp-project.js';
import { removeDir, tempDir, waitFor, writeFiles } from '../fixtures/plugins/helpers.js';

// Dangerous calls over MCP as approval requests, against the real `toolchain mcp` from bin/ and
// the SDK's own client: a client that can answer (elicitation) approves or declines, and the
// call runs or is refused; a client that cannot gets RUN_WAITING with the request's id, a
// person decides over the same SQLite store from another process, and toolchain_run_result
// gives the outcome of the call, which ran in the `mcp` process once it was approved.

const PLUGIN = `name: demo
version: 1.0.0
tools:
  - name: wipe
    description: Wipe a target (writes a marker file to prove it ran).
    dangerous: true
    handler: tools/wipe.js
    parameters:
      type: object
      additionalProperties: false
      properties:
        target: { type: string }
        force: { type: boolean, default: false }
      required: [target]
    returns: { type: object, properties: { wiped: { type: string }, force: { type: boolean } }, required: [wiped] }
  - name: echo
    handler: tools/echo.js
    parameters: { type: object, properties: { text: { type: string } }, required: [text] }
`;

const WIPE = `import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
export default function wipe({ target, force }) {
  appendFileSync(join(process.env.MARKS, 'wiped.txt'), target + '\\n');
  return { wiped: target, force };
}
`;

const SHIP = `name: ship
description: Ship an order once a person says so.
inputs: { order: string }
steps:
  - name: ok
    approval: { prompt: "Ship order {{ $.order }}?" }
  - name: say
    tool: echo
    input_map: { text: "shipped {{ $.order }}" }
outputs:
  said: $.say.text
`;

let root: string;
let store: string;
const clients: Client[] = [];

beforeAll(async () => {
  await buildCli();
  root = await tempDir('toolchain-mcp-approvals-');
  store = `sqlite:${join(root, 'store', 'runs.db')}`;
  await writeFiles(root, {
    'plugins/demo/plugin.yaml': PLUGIN,
    'plugins/demo/tools/wipe.js': WIPE,
    'plugins/demo/tools/echo.js': 'export default ({ text }) => ({ text });\n',
    'chains/ship.yaml': SHIP,
    'marks/.keep': '',
  });
}, 180_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  if (root) await removeDir(root);
});

type Answer = (request: ElicitRequest) => ElicitResult;

/** `node bin/toolchain.js mcp` on the test's store, and a client that answers elicitations with `answer` (none: it declares no elicitation). */
async function connect(name: string, answer?: Answer): Promise<{ client: Client; asked: ElicitRequest[]; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(REPO, 'bin', 'toolchain.js'), 'mcp', '--chains', join(root, 'chains'), '--plugins', join(root, 'plugins'), '--store', store, '--isolation', 'none'],
    cwd: root,
    env: { ...(process.env as Record<string, string>), MARKS: join(root, 'marks') },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name, version: '1.0.0' }, answer ? { capabilities: { elicitation: { form: {} } } } : {});
  const asked: ElicitRequest[] = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request);
      return answer(request);
    });
  }
  await client.connect(transport);
  clients.push(client);
  return { client, asked, stderr: () => stderr };
}

/** `node bin/toolchain.js ARGS --store <the test's store>`: its stdout. */
async function cli(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(REPO, 'bin', 'toolchain.js'), ...args, '--store', store], { cwd: root });
  return stdout;
}

const text = (result: CallToolResult): string => (result.content as { type: string; text: string }[])[0]!.text;

/** toolchain_run_result once the run has ended (the mcp process wakes it within its waker's second). */
async function outcome(client: Client, runId: string): Promise<CallToolResult> {
  return waitFor<CallToolResult | undefined>(
    async () => {
      const r = (await client.callTool({ name: 'toolchain_run_result', arguments: { run_id: runId } })) as CallToolResult;
      return /^RUN_(WAITING|IN_PROGRESS): /.test(text(r)) ? undefined : r;
    },
    20_000,
    200,
  ) as Promise<CallToolResult>;
}

async function wiped(): Promise<string[]> {
  const file = join(root, 'marks', 'wiped.txt');
  return existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean) : [];
}

describe('dangerous calls over MCP, with a client that can answer (elicitation)', () => {
  it('asks the client with the tool, the step and the validated arguments; approved, the tool runs', async () => {
    const { client, asked } = await connect('approving-client', () => ({ action: 'accept', content: { approve: true, comment: 'fine by me' } }));
    const result = (await client.callTool({ name: 'wipe', arguments: { target: 'disk-a' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ wiped: 'disk-a', force: false });
    expect(await wiped()).toContain('disk-a');
    expect(asked).toHaveLength(1);
    const params = asked[0]!.params as { message: string; requestedSchema: unknown };
    expect(params.message).toContain("dangerous tool 'demo/wipe'");
    expect(params.message).toContain("step 'call'");
    // The validated arguments, with the default filled in.
    expect(params.message).toContain('"target": "disk-a"');
    expect(params.message).toContain('"force": false');
    expect(params.requestedSchema).toMatchObject({ type: 'object', properties: { approve: { type: 'boolean' }, comment: { type: 'string' } }, required: ['approve'] });
    // A durable request, decided and recorded as the client's, with its comment.
    const opened = await openStore(store);
    try {
      const waits = await opened.waits.listWaits({ kind: 'approval' });
      const decided = waits.find((w) => (w.detail as { args?: { target?: string } } | null)?.args?.target === 'disk-a');
      expect(decided?.outcome).toMatchObject({ ok: true, by: 'mcp:approving-client', comment: 'fine by me' });
    } finally {
      await opened.close();
    }
  });

  it('declined, the call is refused with APPROVAL_DENIED and the tool never runs', async () => {
    const { client, asked } = await connect('declining-client', () => ({ action: 'decline' }));
    const result = (await client.callTool({ name: 'wipe', arguments: { target: 'disk-b' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^APPROVAL_DENIED: /);
    expect(asked).toHaveLength(1);
    expect(await wiped()).not.toContain('disk-b');
  });

  it('answered with approve: false, the same', async () => {
    const { client } = await connect('refusing-client', () => ({ action: 'accept', content: { approve: false } }));
    const result = (await client.callTool({ name: 'wipe', arguments: { target: 'disk-c' } })) as CallToolResult;
    expect(text(result)).toMatch(/^APPROVAL_DENIED: /);
    expect(await wiped()).not.toContain('disk-c');
  });

  it("puts a chain's approval step to the client too", async () => {
    const { client, asked } = await connect('approving-client', () => ({ action: 'accept', content: { approve: true } }));
    const result = (await client.callTool({ name: 'ship', arguments: { order: 'A-7' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ said: 'shipped A-7' });
    expect((asked[0]!.params as { message: string }).message).toContain('Ship order A-7?');
  });

  it("a chain whose approval step the client declines fails with APPROVAL_DENIED at that step", async () => {
    const { client } = await connect('declining-client', () => ({ action: 'decline' }));
    const result = (await client.callTool({ name: 'ship', arguments: { order: 'A-8' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^APPROVAL_DENIED: chain 'ship' failed at step 'ok'/);
  });
});

describe('dangerous calls over MCP, with a client that cannot answer', () => {
  it('answers RUN_WAITING with the request id; once a person approves, the call runs and toolchain_run_result gives its result', async () => {
    const { client } = await connect('plain-client');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('toolchain_run_result');
    const result = (await client.callTool({ name: 'wipe', arguments: { target: 'disk-d', force: true } })) as CallToolResult;
    expect(result.isError).toBe(true);
    const said = text(result);
    expect(said).toMatch(/^RUN_WAITING: /);
    const [, approvalId] = /approval request (\S+):/.exec(said)!;
    const [, runId] = /"run_id": "([^"]+)"/.exec(said)!;
    expect(said).toContain(`toolchain approvals approve ${approvalId}`);
    expect(said).toContain(`POST /api/approvals/${approvalId}`);
    expect(await wiped()).not.toContain('disk-d');

    const before = (await client.callTool({ name: 'toolchain_run_result', arguments: { run_id: runId } })) as CallToolResult;
    expect(text(before)).toMatch(/^RUN_WAITING: /);
    expect(text(before)).toContain(approvalId);

    // A person decides, from another process, on the same store.
    const engine = await createEngine({ store });
    try {
      const pending = await engine.approvals.list();
      expect(pending.find((a) => a.id === approvalId)).toMatchObject({ tool: 'demo/wipe', args: { target: 'disk-d', force: true } });
    } finally {
      await engine.close();
    }
    expect(await cli('approvals', 'approve', approvalId!, '--by', 'ada')).toContain(`${approvalId} approved by ada`);
    // The `mcp` process wakes the run and the tool runs there.
    const after = await outcome(client, runId!);
    expect(after.isError).toBeFalsy();
    expect(after.structuredContent).toEqual({ wiped: 'disk-d', force: true });
    expect(await wiped()).toContain('disk-d');
  }, 40_000);

  it('a call left waiting by an mcp process that has gone completes in the next one', async () => {
    const first = await connect('plain-client');
    const said = text((await first.client.callTool({ name: 'wipe', arguments: { target: 'disk-f' } })) as CallToolResult);
    const [, approvalId] = /approval request (\S+):/.exec(said)!;
    const [, runId] = /"run_id": "([^"]+)"/.exec(said)!;
    await first.client.close();
    const engine = await createEngine({ store });
    try {
      await engine.approvals.decide(approvalId!, { approved: true, by: 'test' });
    } finally {
      await engine.close();
    }
    const { client } = await connect('plain-client');
    const after = await outcome(client, runId!);
    expect(after.structuredContent).toEqual({ wiped: 'disk-f', force: false });
    expect(await wiped()).toContain('disk-f');
  }, 40_000);

  it('a denial from elsewhere ends the call with APPROVAL_DENIED', async () => {
    const { client } = await connect('plain-client');
    const said = text((await client.callTool({ name: 'wipe', arguments: { target: 'disk-e' } })) as CallToolResult);
    const [, approvalId] = /approval request (\S+):/.exec(said)!;
    const [, runId] = /"run_id": "([^"]+)"/.exec(said)!;
    await cli('approvals', 'deny', approvalId!, '--comment', 'not today');
    const after = await outcome(client, runId!);
    expect(after.isError).toBe(true);
    expect(text(after)).toMatch(/^APPROVAL_DENIED: /);
    expect(await wiped()).not.toContain('disk-e');
  }, 40_000);

  it("leaves a chain's approval step for a person the same way", async () => {
    const { client } = await connect('plain-client');
    const said = text((await client.callTool({ name: 'ship', arguments: { order: 'B-1' } })) as CallToolResult);
    expect(said).toMatch(/^RUN_WAITING: /);
    expect(said).toContain('Ship order B-1?');
    const [, approvalId] = /approval request (\S+):/.exec(said)!;
    const [, runId] = /"run_id": "([^"]+)"/.exec(said)!;
    const engine = await createEngine({ store });
    try {
      await engine.approvals.decide(approvalId!, { approved: true, by: 'test' });
    } finally {
      await engine.close();
    }
    expect((await outcome(client, runId!)).structuredContent).toEqual({ said: 'shipped B-1' });
  }, 40_000);

  it('toolchain_run_result answers only runs of calls made over MCP', async () => {
    const { client } = await connect('plain-client');
    const r = (await client.callTool({ name: 'toolchain_run_result', arguments: { run_id: 'some-other-run' } })) as CallToolResult;
    expect(text(r)).toMatch(/^RUN_NOT_FOUND: /);
  });
});
