import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type RunEvent } from '../../src/index.js';
import { runCli } from '../helpers/run-cli.js';

// Plugins whose tools come from real MCP servers, installed from npm and started with node and
// their installed entry file: the filesystem server (a chain through it; validate against its
// schemas), the everything server (structured content, errors, progress, cancellation), and a
// small server built on the official SDK whose list changes while it runs.

const require = createRequire(import.meta.url);
const FS_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const CHANGING = join(import.meta.dirname, '..', 'fixtures', 'mcp', 'changing-server.mjs');
const HTTP_SERVER = join(import.meta.dirname, '..', 'fixtures', 'mcp', 'http-server.mjs');

/** Starts the Streamable HTTP fixture on `port` (0: a free one) with its token; resolves once it listens. */
async function httpServer(port: number, token: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [HTTP_SERVER, String(port)], { env: { ...process.env, MCP_TEST_TOKEN: token }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  const listening = new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited (${code}) before it listened: ${out}`)));
  });
  return { child, port: await listening };
}

let root: string;
let data: string;
let cacheDir: string;

function mcpPlugin(name: string, args: readonly string[], extra = ''): string {
  return `name: ${name}\nversion: 1.0.0\nsource:\n  mcp:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify(args)}\n${extra}`;
}

async function project(name: string, plugins: Record<string, string>, chains: Record<string, string>): Promise<{ dir: string; pluginsDir: string; chainsDir: string }> {
  const dir = join(root, name);
  const pluginsDir = join(dir, 'plugins');
  const chainsDir = join(dir, 'chains');
  await mkdir(chainsDir, { recursive: true });
  for (const [p, text] of Object.entries(plugins)) {
    await mkdir(join(pluginsDir, p), { recursive: true });
    await writeFile(join(pluginsDir, p, 'plugin.yaml'), text);
  }
  for (const [c, text] of Object.entries(chains)) await writeFile(join(chainsDir, `${c}.yaml`), text);
  return { dir, pluginsDir, chainsDir };
}

/** Process ids of this process's children running `script`. */
function childrenRunning(script: string): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(script))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mcp-source-')));
  data = join(root, 'data');
  cacheDir = join(root, 'cache');
  await mkdir(join(data, 'notes'), { recursive: true });
  await writeFile(join(data, 'notes', 'hello.txt'), 'hello from a file\n');
  await writeFile(join(data, 'notes', 'other.txt'), 'other\n');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('source: mcp with @modelcontextprotocol/server-filesystem', () => {
  let engine: Engine;
  beforeAll(async () => {
    const p = await project(
      'fs',
      { fs: mcpPlugin('fs', [FS_SERVER, data], '  include: [list_directory, read_text_file, write_file]\ntools:\n  - name: list_directory\n    timeout: 5s\n') },
      {
        browse: `name: browse\ninputs: { folder: string, file: string }\nsteps:\n  - name: listing\n    tool: fs/list_directory\n    input_map: { path: $.folder }\n  - name: read\n    tool: fs/read_text_file\n    input_map: { path: "{{ $.folder }}/{{ $.file }}" }\noutputs:\n  listing: $.listing.content\n  text: $.read.content\n`,
      },
    );
    engine = await createEngine({ chainsDir: p.chainsDir, pluginsDir: p.pluginsDir });
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('lists a folder and reads a file through the server, with its schemas and annotations', async () => {
    const status = engine.plugins()[0]!;
    expect(status.status).toBe('active');
    // In the server's own order.
    expect(status.tools).toEqual(['fs/read_text_file', 'fs/write_file', 'fs/list_directory']);
    const result = await engine.run('browse', { folder: join(data, 'notes'), file: 'hello.txt' });
    expect(result.error).toBeUndefined();
    expect(result.outputs).toEqual({ listing: '[FILE] hello.txt\n[FILE] other.txt', text: 'hello from a file\n' });
    const tools = Object.fromEntries(engine.tools().tools().map((t) => [t.qualifiedName, t]));
    // destructiveHint: true makes write_file dangerous; the manifest's entry sets a timeout.
    expect(tools['fs/write_file']!.dangerous).toBe(true);
    expect(tools['fs/read_text_file']!.dangerous).toBe(false);
    expect(tools['fs/list_directory']!.timeoutMs).toBe(5000);
    expect(tools['fs/read_text_file']!.returns).toMatchObject({ type: 'object', properties: { content: { type: 'string' } } });
  });

  it('a server error is a tool error worded for the model', async () => {
    engine.addChain('name: missing\nsteps:\n  - name: read\n    tool: fs/read_text_file\n    input_map: { path: /nonexistent/outside.txt }\n');
    const result = await engine.run('missing');
    expect(result.error?.code).toBe('TOOL_ERROR');
    expect(result.error?.message).toMatch(/tool 'fs\/read_text_file' reported an error: .*(denied|outside|not allowed)/i);
  });
});

describe('validate against an MCP server\'s schemas (the CLI, as users start it)', () => {
  it('reports a misspelt parameter at its line, and uses the cached listing when the server is down', async () => {
    const launcher = `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(FS_SERVER)} ${JSON.stringify(data)}\n`;
    const manifest = 'name: fs\nversion: 1.0.0\nsource:\n  mcp:\n    command: ./server.sh\n';
    const p = await project('fs-validate', { fs: manifest }, { typo: 'name: typo\nsteps:\n  - name: read\n    tool: fs/read_text_file\n    input_map:\n      paht: /tmp/x\n' });
    await writeFile(join(p.pluginsDir, 'fs', 'server.sh'), launcher, { mode: 0o755 });
    const env = { TOOLCHAIN_CACHE_DIR: cacheDir };
    const first = await runCli(['validate', '--chains', p.chainsDir, '--plugins', p.pluginsDir], { env });
    expect(first.code).toBe(2);
    // The server's schema lets other keys through, so the misspelling is a warning beside the
    // missing required parameter, which is the error.
    expect(first.stdout + first.stderr).toMatch(/typo\.yaml:5:5 MISSING_PARAMETER .*without 'path'/);
    expect(first.stdout + first.stderr).toMatch(/typo\.yaml:6:7 UNDECLARED_PARAMETER .*'paht'.*did you mean 'path'/);
    // The server cannot start now: the listing from the run before is used, with a warning.
    await writeFile(join(p.pluginsDir, 'fs', 'server.sh'), '#!/bin/sh\necho down for maintenance >&2\nexit 1\n', { mode: 0o755 });
    const cached = await runCli(['validate', '--chains', p.chainsDir, '--plugins', p.pluginsDir], { env });
    expect(cached.code).toBe(2);
    const out = cached.stdout + cached.stderr;
    expect(out).toMatch(/plugin\.yaml:\d+:\d+ TOOL_UNAVAILABLE .*could not be started.*down for maintenance.*tools it listed at/);
    expect(out).toMatch(/typo\.yaml:6:7 UNDECLARED_PARAMETER .*'paht'/);
  });
});

describe('source: mcp with @modelcontextprotocol/server-everything', () => {
  let engine: Engine;
  beforeAll(async () => {
    const p = await project(
      'everything',
      { all: mcpPlugin('all', [EVERYTHING, 'stdio'], '  include: [get-structured-content, get-resource-reference, trigger-long-running-operation, echo]\n') },
      {
        weather: 'name: weather\nsteps:\n  - name: w\n    tool: all/get-structured-content\n    input_map: { location: Chicago }\noutputs: { t: $.w.temperature, c: $.w.conditions }\n',
        bad_ref: 'name: bad_ref\nsteps:\n  - name: r\n    tool: all/get-resource-reference\n    input_map: { resourceType: Text, resourceId: 0 }\n',
        long: 'name: long\nsteps:\n  - name: op\n    tool: all/trigger-long-running-operation\n    input_map: { duration: 0.6, steps: 3 }\n',
        cut: 'name: cut\nsteps:\n  - name: op\n    tool: all/trigger-long-running-operation\n    timeout: 300ms\n    input_map: { duration: 30, steps: 30 }\n',
        echo: 'name: echo\nsteps:\n  - name: e\n    tool: all/echo\n    input_map: { message: hi }\n    retry: { max_attempts: 8, backoff: { initial: 100ms, jitter: none }, retry_on: [TOOL_UNAVAILABLE] }\n',
        hang: 'name: hang\nsteps:\n  - name: op\n    tool: all/trigger-long-running-operation\n    input_map: { duration: 20, steps: 2 }\n',
      },
    );
    engine = await createEngine({ chainsDir: p.chainsDir, pluginsDir: p.pluginsDir });
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('takes structuredContent as the output, checked against its output schema', async () => {
    const result = await engine.run('weather');
    expect(result.error).toBeUndefined();
    expect(result.outputs).toEqual({ t: expect.any(Number), c: expect.any(String) });
    expect(engine.tools().get('all/get-structured-content')!.returns).toMatchObject({ properties: { temperature: { type: 'number' } } });
  });

  it('an isError result fails the step with TOOL_ERROR and the server\'s words', async () => {
    const result = await engine.run('bad_ref');
    expect(result.error?.code).toBe('TOOL_ERROR');
    expect(result.error?.message).toMatch(/Invalid resourceId/);
  });

  it('progress notifications become step:progress events', async () => {
    const events: RunEvent[] = [];
    const result = await engine.run('long', undefined, { onEvent: (e) => events.push(e) });
    expect(result.error).toBeUndefined();
    const progress = events.flatMap((e) => (e.type === 'step:progress' ? [[e.step, e.progress, e.total]] : []));
    // The SDK hands notifications over a tick after they arrive and drops progress once the answer
    // is in: the last report may race the result. The ones before it always arrive, in order.
    expect(progress.slice(0, 2)).toEqual([
      ['op', 1, 3],
      ['op', 2, 3],
    ]);
    const started = events.findIndex((e) => e.type === 'step:started');
    const finished = events.findIndex((e) => e.type === 'step:succeeded');
    const first = events.findIndex((e) => e.type === 'step:progress');
    expect(started).toBeLessThan(first);
    expect(first).toBeLessThan(finished);
  });

  it('a step timeout cancels a long call (notifications/cancelled) and the server keeps serving', async () => {
    const result = await engine.run('cut');
    expect(result.error?.code).toBe('TIMEOUT');
    const again = await engine.run('weather');
    expect(again.error).toBeUndefined();
  });

  it('a killed server fails the call in flight with TOOL_UNAVAILABLE, comes back, and the next run works', async () => {
    const [pid] = childrenRunning(EVERYTHING);
    expect(pid).toBeGreaterThan(0);
    const running = engine.run('hang');
    await new Promise((r) => setTimeout(r, 300));
    process.kill(pid!, 'SIGKILL');
    const cutOff = await running;
    expect(cutOff.error?.code).toBe('TOOL_UNAVAILABLE');
    // retry_on: [TOOL_UNAVAILABLE] waits for the restart.
    const retried = await engine.run('echo');
    expect(retried.error).toBeUndefined();
    expect(retried.outputs).toBe('Echo: hi');
    const [restarted] = childrenRunning(EVERYTHING);
    expect(restarted).toBeGreaterThan(0);
    expect(restarted).not.toBe(pid);
  });
});

describe("server-everything's whole list, as this client sees it", () => {
  it('has no tool that needs a capability the client does not declare; a task-only tool is left out with a warning', async () => {
    const p = await project('everything-all', { every: mcpPlugin('every', [EVERYTHING, 'stdio']) }, {});
    const engine = await createEngine({ pluginsDir: p.pluginsDir, cache: 'off' });
    try {
      const status = engine.plugins()[0]!;
      expect(status.status).toBe('active');
      expect(status.tools).toContain('every/echo');
      // Offered only to clients that declare roots, sampling or elicitation.
      for (const tool of ['get-roots-list', 'trigger-sampling-request', 'trigger-elicitation-request', 'trigger-url-elicitation']) expect(status.tools).not.toContain(`every/${tool}`);
      // Listed, but the server runs it only as an MCP task.
      expect(status.tools).not.toContain('every/simulate-research-query');
      expect(status.diagnostics).toEqual([
        expect.objectContaining({ code: 'PLUGIN_INVALID', severity: 'warning', line: 4, message: expect.stringMatching(/'simulate-research-query' is left out: it runs only as an MCP task/) }),
      ]);
    } finally {
      await engine.close();
    }
  });
});

describe('tools/list_changed', () => {
  it('reloads the plugin with the new list, with one server however many reloads', async () => {
    const p = await project('changing', { ch: mcpPlugin('ch', [CHANGING]) }, {
      add: 'name: add\nsteps:\n  - name: a\n    tool: ch/add_tool\n  - name: wait\n    tool: ch/slow\n    input_map: { ms: 400 }\n',
      extra: 'name: extra\nsteps:\n  - name: x\n    tool: ch/extra\n',
    });
    const loaded: string[] = [];
    const engine = await createEngine({ chainsDir: p.chainsDir, pluginsDir: p.pluginsDir, watch: true, onPluginEvent: (e) => loaded.push(e.type) });
    try {
      expect(engine.plugins()[0]!.tools).toEqual(['ch/add_tool', 'ch/slow', 'ch/drop_later', 'ch/later']);
      const before = await engine.run('extra');
      expect(before.error?.code).toBe('TOOL_NOT_FOUND');
      const first = engine.run('add');
      const result = await first;
      expect(result.error).toBeUndefined();
      await expect.poll(() => engine.plugins()[0]!.tools, { timeout: 5000 }).toEqual(['ch/add_tool', 'ch/slow', 'ch/drop_later', 'ch/later', 'ch/extra']);
      const after = await engine.run('extra');
      expect(after.outputs).toBe('extra here');
      // One server for the plugin, however many reloads.
      expect(childrenRunning(CHANGING)).toHaveLength(1);
    } finally {
      await engine.close();
    }
    expect(childrenRunning(CHANGING)).toHaveLength(0);
  });

  it('a run going while the list changes keeps the tools it started with; the next run gets the new list', async () => {
    const p = await project('changing-mid-run', { ch: mcpPlugin('ch', [CHANGING]) }, {
      // Its second step starts only after the first has waited, by when the list has changed.
      going: 'name: going\nsteps:\n  - name: wait\n    tool: ch/slow\n    input_map: { ms: 1500 }\n  - name: then\n    tool: ch/later\n    depends_on: [wait]\noutputs: { said: $.then }\n',
      drop: 'name: drop\nsteps:\n  - name: d\n    tool: ch/drop_later\n',
    });
    const reloads: string[] = [];
    const engine = await createEngine({ chainsDir: p.chainsDir, pluginsDir: p.pluginsDir, watch: true, onPluginEvent: (e) => reloads.push(e.type) });
    try {
      const events: RunEvent[] = [];
      const going = engine.run('going', undefined, { onEvent: (e) => events.push(e) });
      await expect.poll(() => events.some((e) => e.type === 'step:started' && e.step === 'wait')).toBe(true);
      // While the first step waits: the server takes `later` off its list and the plugin reloads.
      expect((await engine.run('drop')).error).toBeUndefined();
      await expect.poll(() => engine.plugins()[0]!.tools, { timeout: 5000 }).toEqual(['ch/add_tool', 'ch/slow', 'ch/drop_later']);
      expect(events.some((e) => e.type === 'step:started' && e.step === 'then')).toBe(false);
      // The run that was going still calls `later`, from the tools it started with.
      const result = await going;
      expect(result.error).toBeUndefined();
      expect(result.outputs).toEqual({ said: 'later ran' });
      // A run started now gets the new list, which has no `later`.
      const after = await engine.run('going');
      expect(after.error?.code).toBe('TOOL_NOT_FOUND');
      expect(after.error?.message).toMatch(/later/);
    } finally {
      await engine.close();
    }
  }, 20_000);
});

describe('source: mcp over Streamable HTTP (url and headers from the environment)', () => {
  it('reaches the server with its header, fails calls with TOOL_UNAVAILABLE while it is gone, and reconnects', async () => {
    let server = await httpServer(0, 't-123');
    const manifest = (name: string): string =>
      `name: ${name}\nversion: 1.0.0\nenv: [MCP_TEST_TOKEN]\nsource:\n  mcp:\n    url: http://127.0.0.1:${server.port}/mcp\n    headers: { Authorization: "Bearer \${MCP_TEST_TOKEN}" }\n    startup_timeout: 5s\n`;
    const p = await project('http', { web: manifest('web') }, {
      hello: 'name: hello\nsteps:\n  - name: g\n    tool: web/greet\n    input_map: { name: Ada }\n    retry: { max_attempts: 10, backoff: { initial: 100ms, jitter: none }, retry_on: [TOOL_UNAVAILABLE] }\noutputs: { text: $.g.text }\n',
      once: 'name: once\nsteps:\n  - name: g\n    tool: web/greet\n    input_map: { name: Bo }\n',
    });
    const engine = await createEngine({ chainsDir: p.chainsDir, pluginsDir: p.pluginsDir, cache: 'off', registryOptions: { env: { MCP_TEST_TOKEN: 't-123' } } });
    try {
      expect(engine.plugins()[0]).toMatchObject({ status: 'active', tools: ['web/greet'] });
      expect(engine.tools().get('web/greet')!.returns).toMatchObject({ required: ['text'] });
      expect((await engine.run('hello')).outputs).toEqual({ text: 'Hello, Ada!' });
      // The server goes away: a call fails at once, as TOOL_UNAVAILABLE.
      server.child.kill('SIGKILL');
      await once(server.child, 'exit');
      const gone = await engine.run('once');
      expect(gone.error?.code).toBe('TOOL_UNAVAILABLE');
      // Back on the same address: the retrying chain waits for the reconnect.
      server = await httpServer(server.port, 't-123');
      const back = await engine.run('hello');
      expect(back.error).toBeUndefined();
      expect(back.outputs).toEqual({ text: 'Hello, Ada!' });
    } finally {
      await engine.close();
      server.child.kill();
    }
  }, 30_000);

  it('a header the server refuses (a wrong token) leaves the plugin unloaded, saying what the server answered', async () => {
    const server = await httpServer(0, 'right');
    try {
      const manifest = `name: web\nversion: 1.0.0\nenv: [MCP_TEST_TOKEN]\nsource:\n  mcp:\n    url: http://127.0.0.1:${server.port}/mcp\n    headers: { Authorization: "Bearer \${MCP_TEST_TOKEN}" }\n`;
      const p = await project('http-refused', { web: manifest }, {});
      const engine = await createEngine({ pluginsDir: p.pluginsDir, cache: 'off', registryOptions: { env: { MCP_TEST_TOKEN: 'wrong' } } });
      try {
        const status = engine.plugins()[0]!;
        expect(status.status).toBe('error');
        expect(status.diagnostics[0]).toMatchObject({ code: 'TOOL_UNAVAILABLE', line: 6 });
        expect(status.diagnostics[0]!.message).toMatch(/could not be reached: .*a wrong or missing token \(HTTP 401\)/);
      } finally {
        await engine.close();
      }
    } finally {
      server.child.kill();
    }
  });
});
