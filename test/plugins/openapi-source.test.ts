import { once } from 'node:events';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { toAnthropicTools, toMcpTools, toOpenAITools } from '../../src/entry/llm.js';
import { inspectPlugins } from '../../src/plugins/index.js';
import { isValidFunctionName } from '../../src/llm/export/export-names.js';
import { toStrictSchema } from '../../src/llm/export/strict-schema.js';

// Plugins whose tools are the operations of real OpenAPI documents: GitHub's (from
// @octokit/openapi), a small document called against a local server (the request checked byte
// for byte; a 500 retried), and real documents of many shapes that must load or be refused with
// a diagnostic, never crash.

const require = createRequire(import.meta.url);
const GITHUB = require.resolve('@octokit/openapi/generated/api.github.com.json');
const EXAMPLES = dirname(require.resolve('@readme/oas-examples/package.json'));
const VENDORED = join(import.meta.dirname, '..', 'fixtures', 'openapi');

let root: string;

async function plugin(name: string, manifest: string, files: Record<string, string> = {}): Promise<string> {
  const pluginsDir = join(root, name, 'plugins');
  await mkdir(join(pluginsDir, name), { recursive: true });
  await writeFile(join(pluginsDir, name, 'plugin.yaml'), manifest);
  for (const [f, text] of Object.entries(files)) await writeFile(join(pluginsDir, name, f), text);
  return pluginsDir;
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'openapi-source-')));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("GitHub's REST API document (@octokit/openapi)", () => {
  it('loads one tool per operation, every name valid for OpenAI, and exports pass the strict-schema check', async () => {
    const pluginsDir = await plugin('github', `name: github\nversion: 1.0.0\nenv: [GITHUB_TOKEN]\nsource:\n  openapi:\n    spec: ${JSON.stringify(GITHUB)}\n    auth: { bearer_env: GITHUB_TOKEN }\n    dangerous: { methods: [DELETE] }\n`);
    // How long it takes is measured by bench/openapi-load.ts, not asserted here.
    const engine = await createEngine({ pluginsDir, load: 'lazy' });
    try {
      const status = engine.plugins()[0]!;
      expect(status.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(status.status).toBe('active');
      expect(status.tools.length).toBeGreaterThan(900);
      const tools = engine.tools().tools();
      expect(tools.find((t) => t.name === 'repos_get-content')).toBeDefined();
      expect(tools.find((t) => t.name === 'repos_delete')!.dangerous).toBe(true);
      expect(tools.find((t) => t.name === 'repos_get')!.dangerous).toBe(false);
      const openai = toOpenAITools(engine, { strict: true });
      expect(openai.length).toBe(tools.length);
      expect(openai.filter((t) => !isValidFunctionName(t.function.name))).toEqual([]);
      for (const t of tools) {
        const converted = toStrictSchema(t.parameters);
        expect(converted.strict || typeof converted.reason === 'string').toBe(true);
      }
      expect(openai.filter((t) => t.function.strict === true).length).toBeGreaterThan(0);
      expect(toAnthropicTools(engine).filter((t) => !isValidFunctionName(t.name))).toEqual([]);
      expect(toMcpTools(engine).length).toBe(tools.length);
    } finally {
      await engine.close();
    }
  }, 60_000);
});

const PETS = `openapi: 3.0.3
info: { title: Pets, version: '1' }
servers: [{ url: 'http://127.0.0.1:{port}/v1', variables: { port: { default: '9' } } }]
paths:
  /stores/{storeId}/pets:
    post:
      operationId: addPet
      tags: [pets]
      parameters:
        - { name: storeId, in: path, required: true, schema: { type: integer } }
        - { name: dryRun, in: query, schema: { type: boolean } }
        - { name: tag, in: query, schema: { type: array, items: { type: string } } }
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/NewPet' }
      responses:
        '201':
          description: created
          content: { application/json: { schema: { $ref: '#/components/schemas/Pet' } } }
  /pets/flaky:
    get:
      operationId: flaky
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
  /pets/old:
    get: { operationId: oldPets, deprecated: true, responses: { '200': { description: ok } } }
components:
  schemas:
    NewPet:
      type: object
      required: [name]
      properties: { name: { type: string }, tag: { type: string, nullable: true } }
    Pet:
      allOf:
        - $ref: '#/components/schemas/NewPet'
        - { type: object, required: [id], properties: { id: { type: integer, format: int64 }, parent: { $ref: '#/components/schemas/Pet' } } }
`;

describe('calls against a local server (127.0.0.1 allowed through TOOLCHAIN_HTTP_ALLOW)', () => {
  let server: Server;
  let port: number;
  const received: Buffer[] = [];
  let flaky = 0;
  beforeAll(async () => {
    // A raw TCP server: what arrives is checked byte for byte, and the answers are written by hand.
    server = createServer((socket: Socket) => {
      let data = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        data = Buffer.concat([data, chunk]);
        const head = data.indexOf('\r\n\r\n');
        if (head < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(data.subarray(0, head).toString())?.[1] ?? 0);
        if (data.length < head + 4 + length) return;
        received.push(data);
        const flakyCall = data.toString().startsWith('GET /v1/pets/flaky');
        const fail = flakyCall && flaky++ === 0;
        const body = fail ? 'upstream down' : flakyCall ? '{"ok":true}' : '{"id":7,"name":"Rex","tag":null}';
        const status = fail ? '500 Internal Server Error' : flakyCall ? '200 OK' : '201 Created';
        socket.end(`HTTP/1.1 ${status}\r\ncontent-type: ${fail ? 'text/plain' : 'application/json'}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.close();
  });

  it('sends path, query and body as the operation says, and retries a 500 with retry_on [HTTP_5XX]', async () => {
    const pluginsDir = await plugin(
      'pets',
      `name: pets\nversion: 1.0.0\nenv: [TOOLCHAIN_HTTP_ALLOW, PETS_KEY]\nsource:\n  openapi:\n    spec: ./openapi.yaml\n    base_url: http://127.0.0.1:${port}/v1\n    auth: { header: X-Api-Key, env: PETS_KEY }\n`,
      { 'openapi.yaml': PETS },
    );
    const chainsDir = join(root, 'pets', 'chains');
    await mkdir(chainsDir, { recursive: true });
    await writeFile(join(chainsDir, 'add.yaml'), 'name: add\nsteps:\n  - name: add\n    tool: pets/addPet\n    input_map: { storeId: 42, dryRun: false, tag: [a, "b c"], body: { name: Rex } }\noutputs: { id: $.add.id, name: $.add.name }\n');
    await writeFile(join(chainsDir, 'flaky.yaml'), 'name: flaky\nsteps:\n  - name: f\n    tool: pets/flaky\n    retry: { max_attempts: 3, backoff: { initial: 10ms, jitter: none }, retry_on: [HTTP_5XX] }\n');
    const engine = await createEngine({ chainsDir, pluginsDir, registryOptions: { env: { TOOLCHAIN_HTTP_ALLOW: `127.0.0.1:${port}`, PETS_KEY: 'k-123' } } });
    try {
      expect(engine.plugins()[0]!.tools).toEqual(['pets/addPet', 'pets/flaky']);
      const tool = engine.tools().get('pets/addPet')!;
      expect(tool.parameters).toMatchObject({ required: ['storeId', 'body'], additionalProperties: false, properties: { storeId: { type: 'integer' }, body: { required: ['name'] } } });
      const result = await engine.run('add');
      expect(result.error).toBeUndefined();
      expect(result.outputs).toEqual({ id: 7, name: 'Rex' });
      const body = '{"name":"Rex"}';
      expect(received[0]!.toString()).toBe(
        'POST /v1/stores/42/pets?dryRun=false&tag=a&tag=b+c HTTP/1.1\r\n' +
          'accept: application/json, */*;q=0.5\r\n' +
          'content-type: application/json\r\n' +
          'x-api-key: k-123\r\n' +
          `content-length: ${body.length}\r\n` +
          `Host: 127.0.0.1:${port}\r\n` +
          'Connection: close\r\n' +
          '\r\n' +
          body,
      );
      const events: string[] = [];
      const retried = await engine.run('flaky', undefined, { onEvent: (e) => events.push(e.type === 'step:retrying' ? `${e.type} ${e.error.code}` : e.type) });
      expect(retried.error).toBeUndefined();
      expect(retried.outputs).toEqual({ ok: true });
      expect(events).toContain('step:retrying HTTP_5XX');
    } finally {
      await engine.close();
    }
  });

  it('refuses 127.0.0.1 when the allow list does not name it', async () => {
    const pluginsDir = await plugin('pets2', `name: pets2\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ./openapi.yaml\n    base_url: http://127.0.0.1:${port}/v1\n`, { 'openapi.yaml': PETS });
    const engine = await createEngine({ pluginsDir });
    try {
      engine.addChain('name: f\nsteps:\n  - name: f\n    tool: pets2/flaky\n');
      const before = received.length;
      const result = await engine.run('f');
      expect(result.error?.code).toBe('ADDRESS_REFUSED');
      expect(received.length).toBe(before);
    } finally {
      await engine.close();
    }
  });
});

describe('real documents of many shapes load, or are refused with a diagnostic', () => {
  const documents = [
    ...['petstore.yaml', 'petstore-expanded.yaml', 'schema-circular.yaml', 'api-with-examples.yaml'].map((f) => join(EXAMPLES, '2.0', 'yaml', f)),
    ...['circular.yaml', 'circular-request-bodies.yaml', 'polymorphism.yaml', 'discriminators.yaml', 'form-data.yaml', 'file-uploads.yaml', 'parameters-style.yaml', 'schema-enums.yaml', 'uspto.yaml', 'star-trek.yaml', 'complex-nesting.yaml'].map((f) => join(EXAMPLES, '3.0', 'yaml', f)),
    ...['petstore.yaml', 'train-travel.yaml', 'webhooks.yaml', 'schema-types.yaml'].map((f) => join(EXAMPLES, '3.1', 'yaml', f)),
    ...['1password-events.json', 'ably-platform.json', 'adafruit.json'].map((f) => join(VENDORED, f)),
  ];

  it.each(documents)('%s', async (file) => {
    const name = `doc${documents.indexOf(file)}`;
    const pluginsDir = await plugin(name, `name: ${name}\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ${JSON.stringify(file)}\n    base_url: https://api.example.com\n`);
    const inspection = await inspectPlugins(pluginsDir);
    const report = inspection.plugins[0]!;
    // Every one of these loads; operations that cannot be sent (multipart, binary bodies) are left
    // out with a warning at the spec line; a document of webhooks only has no tools.
    expect(report.status, JSON.stringify(report.diagnostics)).toBe('ok');
    for (const t of report.tools) expect(isValidFunctionName(t.name)).toBe(true);
    const leftOut = report.diagnostics.filter((d) => d.severity === 'warning' && /is left out/.test(d.message));
    for (const d of leftOut) expect(d.line).toBeGreaterThan(0);
    if (file.endsWith('webhooks.yaml')) expect(report.tools).toEqual([]);
    else expect(report.tools.length + leftOut.length).toBeGreaterThan(0);
  });

  it('a pattern written for another regular-expression engine becomes a note; its operation keeps its tool', async () => {
    const file = join(EXAMPLES, '3.0', 'yaml', 'schema-validation.yaml');
    const pluginsDir = await plugin('patterns', `name: patterns\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ${JSON.stringify(file)}\n`);
    const engine = await createEngine({ pluginsDir, cache: 'off' });
    try {
      const tool = engine.tools().get('patterns/get__anything_strings');
      expect(tool).toBeDefined();
      // An unescaped `{`, which JavaScript's Unicode regular expressions refuse.
      expect((tool!.parameters.properties as Record<string, unknown>)['complex-pattern-required']).toEqual({
        type: 'string',
        description: expect.stringMatching(/^OpenAPI 3\.0\.3, .* \(pattern: \^\(\?:\{\[0-9a-fA-F\]/),
      });
      expect(tool!.prepare({ 'name-pattern-required': 'aXb', 'complex-pattern-required': '{x}' }).ok).toBe(true);
      expect(tool!.prepare({ 'name-pattern-required': 'nope', 'complex-pattern-required': '{x}' })).toMatchObject({ ok: false, problems: [{ path: '/name-pattern-required' }] });
    } finally {
      await engine.close();
    }
  });

  it('an operation that cannot be sent is reported only when the filters keep it', async () => {
    const file = join(EXAMPLES, '3.0', 'yaml', 'file-uploads.yaml');
    const pluginsDir = await plugin('uploads', `name: uploads\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ${JSON.stringify(file)}\n  include: { tags: [image/png] }\n`);
    const report = (await inspectPlugins(pluginsDir)).plugins[0]!;
    expect(report.tools).toEqual([]);
    expect(report.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/^operation POST \/anything\/image-png is left out: its request body is image\/png/)]);
  });

  it('a document that is not OpenAPI, or has a $ref to nowhere, is refused at its spec line', async () => {
    const pluginsDir = await plugin('broken', 'name: broken\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ./doc.yaml\n', { 'doc.yaml': "openapi: 3.0.0\ninfo: { title: x, version: '1' }\npaths:\n  /a: { get: { responses: { '200': { $ref: '#/components/responses/Nope' } } } }\n" });
    const report = (await inspectPlugins(pluginsDir)).plugins[0]!;
    expect(report.status).toBe('error');
    expect(report.diagnostics[0]).toMatchObject({ code: 'PLUGIN_INVALID', line: 5 });
    expect(report.diagnostics[0]!.message).toMatch(/references do not resolve/);
  });
});

describe('hot reload of an OpenAPI plugin', () => {
  const doc = (ops: readonly string[]): string =>
    `openapi: 3.0.3\ninfo: { title: Live, version: '1' }\npaths:\n${ops.map((op) => `  /${op}:\n    get: { operationId: ${op}, responses: { '200': { description: ok } } }\n`).join('')}`;

  it('editing the document inside the plugin folder changes the tools; a broken edit keeps the last good ones', async () => {
    const pluginsDir = await plugin('live', 'name: live\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ./openapi.yaml\n    base_url: https://api.example.com\n', { 'openapi.yaml': doc(['first']) });
    const file = join(pluginsDir, 'live', 'openapi.yaml');
    const engine = await createEngine({ pluginsDir, watch: true, cache: 'off' });
    try {
      expect(engine.plugins()[0]!.tools).toEqual(['live/first']);
      await writeFile(file, doc(['first', 'second']));
      await expect.poll(() => engine.plugins()[0]!.tools, { timeout: 10_000 }).toEqual(['live/first', 'live/second']);
      await writeFile(file, 'openapi: 3.0.3\npaths: [\n');
      await expect.poll(() => engine.plugins()[0]!.stale, { timeout: 10_000 }).toBe(true);
      const status = engine.plugins()[0]!;
      expect(status.tools).toEqual(['live/first', 'live/second']);
      expect(status.diagnostics[0]).toMatchObject({ code: 'PLUGIN_INVALID', message: expect.stringMatching(/neither JSON nor YAML/) });
      await writeFile(file, doc(['third']));
      await expect.poll(() => engine.plugins()[0]!.tools, { timeout: 10_000 }).toEqual(['live/third']);
      expect(engine.plugins()[0]!.stale).toBe(false);
    } finally {
      await engine.close();
    }
  }, 40_000);
});
