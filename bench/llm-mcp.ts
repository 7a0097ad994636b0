// MCP `tools/call` round trip: the SDK client calling a trivial tool of `toolchain mcp`
// running as a child process over stdio (median, target ≤ 2 ms). Baselines, same machine, same
// moment: the SDK's `ping` to the same server (the protocol and transport without a tool), and a
// hand-written JSON-RPC echo over a child process's stdio pipe (the floor of any stdio protocol).

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { median, percentile, runIfMain, verdict, type BenchResult } from './harness.js';

const WARMUP = 300;
const CALLS = 3_000;
const TARGET_MS = 2;

// The CLI compiled beside this file (npm run bench compiles src/ and bench/ together), so the
// figure is for the code of this checkout, built or not.
const CLI_MAIN = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const LAUNCHER = `import { main } from ${JSON.stringify(CLI_MAIN)};
process.exitCode = await main(process.argv.slice(1), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, cwd: process.cwd(), env: process.env });`;

const ECHO_SERVER = `import { createInterface } from 'node:readline';
createInterface({ input: process.stdin }).on('line', (line) => {
  const { id } = JSON.parse(line);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result: {} }) + '\\n');
});`;

async function makeProject(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'toolchain-bench-mcp-'));
  await mkdir(join(root, 'plugins', 'bench', 'tools'), { recursive: true });
  await mkdir(join(root, 'chains'));
  await writeFile(
    join(root, 'plugins', 'bench', 'plugin.yaml'),
    'name: bench\nversion: 1.0.0\ntools:\n  - name: noop\n    parameters: { type: object, properties: { n: { type: integer } } }\n',
  );
  await writeFile(join(root, 'plugins', 'bench', 'tools', 'noop.js'), 'export default ({ n }) => ({ n });\n');
  return root;
}

async function timeEach(runs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await fn(i);
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

async function mcpFigures(root: string): Promise<{ call: number[]; ping: number[] }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--input-type=module', '-e', LAUNCHER, 'mcp', '--no-watch', '--chains', join(root, 'chains'), '--plugins', join(root, 'plugins')],
    cwd: root,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  try {
    const call = await timeEach(CALLS, async (i) => {
      const result = await client.callTool({ name: 'noop', arguments: { n: i } });
      if (result.isError) throw new Error(JSON.stringify(result.content));
    });
    const ping = await timeEach(CALLS, () => client.ping());
    return { call, ping };
  } finally {
    await client.close();
  }
}

async function echoFigures(): Promise<number[]> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', ECHO_SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map<number, () => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const { id } = JSON.parse(line) as { id: number };
    waiting.get(id)?.();
    waiting.delete(id);
  });
  try {
    return await timeEach(CALLS, (i) => {
      const done = new Promise<void>((resolve) => waiting.set(i, resolve));
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'echo', params: { n: i } })}\n`);
      return done;
    });
  } finally {
    child.kill();
  }
}

export async function benchLlmMcp(): Promise<BenchResult> {
  const root = await makeProject();
  try {
    const { call, ping } = await mcpFigures(root);
    const echo = await echoFigures();
    const p50 = median(call);
    const fmt = (xs: number[]): string => `median ${median(xs).toFixed(3)} ms, p99 ${percentile(xs, 99).toFixed(3)} ms`;
    return {
      name: 'llm-mcp',
      lines: [
        `tools/call of a trivial tool over stdio (SDK client → toolchain mcp): ${fmt(call)} (${CALLS} calls) — target ≤ ${TARGET_MS} ms: ${verdict(p50 <= TARGET_MS)}`,
        `baseline: SDK ping to the same server: ${fmt(ping)}`,
        `baseline: raw JSON-RPC echo over a child's stdio pipe: ${fmt(echo)}`,
        `tools/call costs ${(p50 - median(ping)).toFixed(3)} ms over a ping (validation, execution, result conversion)`,
      ],
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await runIfMain(import.meta.url, benchLlmMcp);
