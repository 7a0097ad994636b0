// The shipped chains: each compiles against the shipped plugins' tools, every shipped YAML file
// carries its `$schema` comment, and each chain runs end to end on the real plugins (the HTTP one
// against a local server this file starts; folder_report on a copy of test/fixtures/shipped).

import { once } from 'node:events';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import type { RunEvent } from '../../src/run-model/events.js';
import { compileChainSet, type Diagnostic, type NameCatalogue } from '../../src/index.js';
import { createPluginHost } from '../../src/plugins/index.js';
import { createRegistry } from '../../src/registry/index.js';

const REPO = join(import.meta.dirname, '..', '..');
const CHAINS = join(REPO, 'chains');
const PLUGINS = join(REPO, 'plugins');
const FIXTURE = join(REPO, 'test', 'fixtures', 'shipped', 'folder');

async function yamlFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => /\.ya?ml$/.test(n) && !/\.test\.ya?ml$/.test(n)).sort();
}

async function pluginDirs(): Promise<string[]> {
  const entries = await readdir(PLUGINS, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

/** Every tool name the shipped manifests declare, bare and as `plugin/tool`. */
async function catalogue(): Promise<NameCatalogue> {
  const names = new Set<string>();
  for (const dir of await pluginDirs()) {
    const manifest = parse(await readFile(join(PLUGINS, dir, 'plugin.yaml'), 'utf8')) as { name: string; tools: { name: string }[] };
    for (const tool of manifest.tools) {
      names.add(tool.name);
      names.add(`${manifest.name}/${tool.name}`);
    }
  }
  return { has: (n) => names.has(n), names: () => names.values() };
}

const where = (d: Diagnostic): string => `${d.file}:${d.line ?? '?'}:${d.col ?? '?'} ${d.code} ${d.message}`;

describe('shipped files', () => {
  it('every chain compiles with no diagnostics against the shipped tools', async () => {
    const files = await yamlFiles(CHAINS);
    expect(files).toEqual(expect.arrayContaining(['city_brief.yaml', 'city_compare.yaml', 'fetch_and_extract.yaml', 'folder_report.yaml']));
    const sources = await Promise.all(files.map(async (f) => ({ file: join(CHAINS, f), text: await readFile(join(CHAINS, f), 'utf8') })));
    const set = compileChainSet(sources, await catalogue());
    expect(set.diagnostics.map(where)).toEqual([]);
    expect([...set.plans.keys()].sort()).toEqual(files.map((f) => f.replace(/\.ya?ml$/, '')).sort());
  });

  it('every chain starts with the $schema comment and documents how to run it', async () => {
    for (const file of await yamlFiles(CHAINS)) {
      const text = await readFile(join(CHAINS, file), 'utf8');
      expect(text.split('\n')[0], file).toBe('# yaml-language-server: $schema=../schemas/chain.schema.json');
      expect(text, file).toContain(`toolchain run ${file.replace(/\.ya?ml$/, '')}`);
    }
  });

  it('every plugin manifest starts with the $schema comment and satisfies plugin.schema.json', async () => {
    const schema = JSON.parse(await readFile(join(REPO, 'schemas', 'plugin.schema.json'), 'utf8')) as object;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    const dirs = await pluginDirs();
    expect(dirs).toEqual(['files', 'geo', 'http', 'shell', 'text']);
    for (const dir of dirs) {
      const text = await readFile(join(PLUGINS, dir, 'plugin.yaml'), 'utf8');
      expect(text.split('\n')[0], dir).toBe('# yaml-language-server: $schema=../../schemas/plugin.schema.json');
      const ok = validate(parse(text));
      expect(ok ? [] : validate.errors, dir).toEqual([]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// End to end: the engine with the shipped chains and plugins.

let engine: Engine;
let closeHost: (() => Promise<void>) | undefined;
let filesRoot: string;

beforeAll(async () => {
  filesRoot = await mkdtemp(join(tmpdir(), 'toolchain-report-'));
  await cp(FIXTURE, filesRoot, { recursive: true });
  // One file that cannot be read as text: word_stats fails on it with NOT_TEXT.
  await writeFile(join(filesRoot, 'notes', 'scan.txt'), Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0x01, 0x02]));
  const registry = createRegistry({ env: { ...process.env, TOOLCHAIN_FILES_ROOT: filesRoot, TOOLCHAIN_HTTP_ALLOW: '127.0.0.1' } });
  engine = await createEngine({ chainsDir: CHAINS, pluginsDir: PLUGINS, registry });
  if (!engine.tools().has('find_city')) {
    // The engine does not load plugins itself (yet): load them into its registry here.
    const host = createPluginHost({ dir: PLUGINS, registry });
    await host.ready;
    closeHost = () => host.close();
  }
});

afterAll(async () => {
  await engine?.close();
  await closeHost?.();
  await rm(filesRoot, { recursive: true, force: true });
});

describe('city_brief', () => {
  it('answers a question with the city, its local time and population', async () => {
    const result = await engine.run('city_brief', { question: 'What time is it in Osaka?' });
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toMatchObject({ city: 'Osaka', country: 'Japan', timezone: 'Asia/Tokyo', utc_offset: '+09:00', confidence: 1 });
    const { text } = result.outputs as { text: string };
    expect(text).toMatch(/^Osaka, Japan: \d{2}:\d{2} \(Asia\/Tokyo\), population \d{1,3}(,\d{3})+$/);
    expect(result.steps).toMatchObject({
      locate: { status: 'succeeded' },
      clock: { status: 'succeeded', attempts: 1 },
      facts: { status: 'succeeded' },
      brief: { status: 'succeeded' },
      unsure: { status: 'skipped' },
    });
  });

  it('runs clock and facts side by side, after locate', async () => {
    const events: RunEvent[] = [];
    await engine.run('city_brief', { question: 'Is it late in Buenos Aires?' }, { onEvent: (e) => events.push(e) });
    const order = events.filter((e) => e.type === 'step:started' || e.type === 'step:succeeded').map((e) => `${e.type === 'step:started' ? '>' : '<'}${'step' in e ? e.step : ''}`);
    expect(order.indexOf('>facts')).toBeGreaterThan(order.indexOf('<locate'));
    // facts does not wait for clock: both start before either finishes, or facts starts before clock ends.
    expect(order.indexOf('>facts')).toBeLessThan(order.indexOf('<clock'));
  });

  it('coerces string inputs and uses a 12-hour clock', async () => {
    const result = await engine.run('city_brief', { question: 'Time in Buenos Aires please', hour12: 'true' });
    expect((result.outputs as { text: string }).text).toMatch(/^Buenos Aires, Argentina: \d{1,2}:\d{2} (AM|PM) \(America\/(Argentina\/)?Buenos_Aires\)/);
  });

  it('answers a weak match with the unsure step instead of brief (when)', async () => {
    const result = await engine.run('city_brief', { question: 'time in nice?' });
    expect(result.status).toBe('succeeded');
    expect(result.steps).toMatchObject({ brief: { status: 'skipped' }, unsure: { status: 'succeeded' } });
    expect((result.outputs as { text: string }).text).toContain('Not sure which city you mean: "nice" could be Nice, France');
  });

  it('fails with CITY_NOT_FOUND when the question names no city', async () => {
    const result = await engine.run('city_brief', { question: 'What time is it on the moon?' });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('CITY_NOT_FOUND');
    expect(result.steps.locate?.status).toBe('failed');
  });
});

describe('city_compare (sub-chains)', () => {
  it('runs city_brief twice, in parallel, and measures the distance', async () => {
    const events: RunEvent[] = [];
    const result = await engine.run('city_compare', { first: 'Time in Osaka?', second: 'And in Paris?' }, { onEvent: (e) => events.push(e) });
    expect(result.error).toBeUndefined();
    const outputs = result.outputs as { km: number; text: string; first: { city: string }; second: { city: string } };
    expect(outputs.first.city).toBe('Osaka');
    expect(outputs.second.city).toBe('Paris');
    expect(outputs.km).toBeGreaterThan(9500);
    expect(outputs.km).toBeLessThan(9750);
    expect(outputs.text).toMatch(/^Osaka, Japan: .+ \| Paris, France: .+ \| \d+(\.\d)? km apart$/);
    // The sub-chains' own events come through, marked with their parent step.
    const parents = new Set(events.filter((e) => e.type === 'run:started' && e.parent).map((e) => e.parent?.step));
    expect(parents).toEqual(new Set(['first_city', 'second_city']));
  });
});

describe('folder_report', () => {
  it('counts words per file, totals them and names the largest file', async () => {
    const result = await engine.run('folder_report', { patterns: ['**/*.md'] });
    expect(result.error).toBeUndefined();
    const outputs = result.outputs as Record<string, unknown>;
    expect(outputs).toMatchObject({ files: 2, words: 458, lines: 44, largest: 'notes/journal.md', unreadable: [] });
    expect((outputs.per_file as { path: string }[]).map((f) => f.path)).toEqual(['notes/journal.md', 'readme.md']);
    expect(outputs.summary).toBe('2 files, 2,290 bytes, 458 words in 44 lines; largest: notes/journal.md; unreadable: 0');
  });

  // One unreadable file becomes { error } in its own slot while the others are counted.
  it('carries on past a file that is not text (on_error: continue, per file)', async () => {
    const result = await engine.run('folder_report', {});
    expect(result.status).toBe('succeeded');
    const outputs = result.outputs as { files: number; words: number; unreadable: string[]; per_file: unknown[] };
    expect(outputs.files).toBe(4);
    expect(outputs.words).toBe(469);
    expect(outputs.unreadable).toHaveLength(1);
    expect(outputs.unreadable[0]).toContain('notes/scan.txt');
    expect(outputs.per_file[2]).toEqual({ error: { code: 'NOT_TEXT', message: expect.stringContaining('scan.txt') } });
  });
});

describe('dangerous tools', () => {
  const SAVE = `name: save_note
inputs: { text: string }
steps:
  - name: save
    tool: write_file
    input_map: { path: out/saved.txt, content: $.text }
`;
  const RUN = `name: run_node
steps:
  - name: version
    tool: run_command
    input_map: { command: ${JSON.stringify(process.execPath)}, args: [-e, 'console.log(1 + 1)'] }
`;

  it('refuse without approval: the tool never runs', async () => {
    engine.addChain(SAVE, 'save_note.yaml');
    engine.addChain(RUN, 'run_node.yaml');
    const saved = await engine.run('save_note', { text: 'hello' });
    expect(saved).toMatchObject({ status: 'failed', error: { code: 'APPROVAL_DENIED' } });
    await expect(readFile(join(filesRoot, 'out', 'saved.txt'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    const ran = await engine.run('run_node', {}, { approve: () => false });
    expect(ran).toMatchObject({ status: 'failed', error: { code: 'APPROVAL_DENIED' } });
  });

  it('run once approved, and the approver sees the qualified tool and its arguments', async () => {
    const asked: string[] = [];
    const approve = (req: { tool: string; args: Record<string, unknown> }): boolean => {
      asked.push(`${req.tool} ${JSON.stringify(req.args.path ?? req.args.args)}`);
      return true;
    };
    expect(await engine.run('save_note', { text: 'hello' }, { approve })).toMatchObject({ status: 'succeeded' });
    expect(await readFile(join(filesRoot, 'out', 'saved.txt'), 'utf8')).toBe('hello');
    const ran = await engine.run('run_node', {}, { approve });
    expect(ran.outputs).toMatchObject({ exit_code: 0, stdout: '2\n', timed_out: false });
    expect(asked).toEqual(['files/write_file "out/saved.txt"', 'shell/run_command ["-e","console.log(1 + 1)"]']);
  });
});

describe('fetch_and_extract', () => {
  let server: Server;
  let base: string;
  let flaky = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/page') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<html><head><TITLE>Local test page</TITLE></head><body><a href="/a">a</a> <a href="/b">b</a></body></html>');
      } else if (req.url === '/flaky') {
        flaky += 1;
        if (flaky < 3) {
          res.writeHead(503, { 'content-type': 'text/plain' });
          res.end('busy, try again');
        } else {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<title>Third time lucky</title>');
        }
      } else if (req.url === '/json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ids":[12,34,56]}');
      } else {
        res.writeHead(500);
        res.end('always broken');
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("fetches a page and extracts its title with the default pattern", async () => {
    const result = await engine.run('fetch_and_extract', { url: `${base}/page` });
    expect(result.error).toBeUndefined();
    expect(result.outputs).toMatchObject({ status: 200, count: 1, truncated: false });
    const matches = (result.outputs as { matches: { groups: Record<string, string> }[] }).matches;
    expect(matches[0]?.groups).toEqual({ title: 'Local test page' });
  });

  it('extracts with a custom pattern, from JSON as text', async () => {
    const result = await engine.run('fetch_and_extract', { url: `${base}/json`, pattern: '\\d+', flags: '' });
    expect((result.outputs as { matches: { match: string }[] }).matches.map((m) => m.match)).toEqual(['12', '34', '56']);
  });

  it('retries HTTP_ERROR with backoff until the server recovers', async () => {
    flaky = 0;
    const events: RunEvent[] = [];
    const result = await engine.run('fetch_and_extract', { url: `${base}/flaky` }, { onEvent: (e) => events.push(e) });
    expect(result.error).toBeUndefined();
    expect(result.steps.fetch).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect(events.filter((e) => e.type === 'step:retrying').map((e) => ('error' in e ? e.error?.code : undefined))).toEqual(['HTTP_ERROR', 'HTTP_ERROR']);
    expect((result.outputs as { matches: { groups: Record<string, string> }[] }).matches[0]?.groups.title).toBe('Third time lucky');
  });

  it('gives up after four attempts at a server that stays broken', async () => {
    const result = await engine.run('fetch_and_extract', { url: `${base}/broken` });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('HTTP_ERROR');
    expect(result.steps.fetch).toMatchObject({ status: 'failed', attempts: 4 });
    expect(result.steps.extract?.status).not.toBe('succeeded');
  });
});
