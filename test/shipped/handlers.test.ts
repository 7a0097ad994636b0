// The shipped plugins' handlers, called directly: real behaviour and real errors, against real
// temp folders, a local HTTP server and real child processes. Nothing here needs the network.

import { once } from 'node:events';
import { mkdir, mkdtemp, readFile as fsReadFile, readdir, realpath, rm, symlink, writeFile as fsWriteFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ToolContext } from '../../src/index.js';
import cityFacts from '../../plugins/geo/tools/city_facts.js';
import distance from '../../plugins/geo/tools/distance.js';
import findCity from '../../plugins/geo/tools/find_city.js';
import localTime from '../../plugins/geo/tools/local_time.js';
import fileStats from '../../plugins/files/tools/file_stats.js';
import listFiles from '../../plugins/files/tools/list_files.js';
import readFile from '../../plugins/files/tools/read_file.js';
import writeFile from '../../plugins/files/tools/write_file.js';
import httpRequest from '../../plugins/http/tools/http_request.js';
import runCommand from '../../plugins/shell/tools/run_command.js';
import jsonQuery from '../../plugins/text/tools/json_query.js';
import regexExtract from '../../plugins/text/tools/regex_extract.js';
import renderTemplate from '../../plugins/text/tools/render_template.js';
import wordStats from '../../plugins/text/tools/word_stats.js';

const PLUGINS = join(import.meta.dirname, '..', '..', 'plugins');

/** The engine's full context type: handlers typed against their local interface must accept it. */
function context(env: Record<string, string | undefined> = {}, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, attempt: 1, run_id: 'test-run', step: 'test-step', log: () => undefined, env, idempotencyKey: 'test-run:test-step' };
}

/** The `code` a promise rejects with. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  throw new Error('expected the call to fail');
}

async function messageOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the call to fail');
}

interface Manifest {
  name: string;
  env?: string[];
  tools: { name: string; description?: string; handler?: string; dangerous?: boolean; parameters?: { properties?: Record<string, { description?: string }> } }[];
}

async function manifest(plugin: string): Promise<Manifest> {
  return parse(await fsReadFile(join(PLUGINS, plugin, 'plugin.yaml'), 'utf8')) as Manifest;
}

describe('geo', () => {
  it('find_city finds the first city named in a question, with its zone and coordinates', async () => {
    const found = await findCity({ text: 'What time is it in Osaka?' });
    expect(found).toMatchObject({ city: 'Osaka', country: 'Japan', iso2: 'JP', timezone: 'Asia/Tokyo', confidence: 1, matched: 'Osaka' });
    expect(found.lat).toBeCloseTo(34.75, 1);
    expect(found.lng).toBeCloseTo(135.46, 1);
  });

  it('find_city prefers the longest name, then the country the text mentions, then the most populous', async () => {
    expect((await findCity({ text: 'I love New York in June' })).city).toBe('New York');
    expect(await findCity({ text: 'Flights from London, Ontario' })).toMatchObject({ city: 'London', country: 'Canada' });
    expect(await findCity({ text: 'Is it raining in London?' })).toMatchObject({ city: 'London', country: 'United Kingdom' });
    expect((await findCity({ text: 'Between Paris and Tokyo' })).city).toBe('Paris');
  });

  it('find_city matches any case and accents, with lower confidence for weaker spellings', async () => {
    expect(await findCity({ text: 'OSAKA' })).toMatchObject({ city: 'Osaka', confidence: 0.8 });
    expect(await findCity({ text: 'weather in osaka' })).toMatchObject({ city: 'Osaka', confidence: 0.6 });
    expect(await findCity({ text: 'Is it late in São Paulo?' })).toMatchObject({ city: 'Sao Paulo', confidence: 0.95 });
    expect(await findCity({ text: 'Grüezi from Zurich' })).toMatchObject({ city: 'Zürich', timezone: 'Europe/Zurich' });
  });

  it('find_city distrusts city names that are common words, and looks past them', async () => {
    expect((await findCity({ text: 'Nice weather today in Berlin' })).city).toBe('Berlin');
    expect(await findCity({ text: 'time in nice?' })).toMatchObject({ city: 'Nice', confidence: 0.3 });
    expect(await findCity({ text: 'We flew to Nice last week' })).toMatchObject({ city: 'Nice', confidence: 1 });
  });

  it('find_city fails with CITY_NOT_FOUND when no city is named', async () => {
    expect(await codeOf(findCity({ text: 'What time is it on the moon?' }))).toBe('CITY_NOT_FOUND');
    expect(await codeOf(findCity({ text: '' }))).toBe('CITY_NOT_FOUND');
    expect(await codeOf(findCity({ text: 'x'.repeat(100_001) }))).toBe('TEXT_TOO_LONG');
  });

  it('local_time gives time, date and offset in a zone, 24- or 12-hour', async () => {
    const at = '2025-03-04T05:05:09Z';
    expect(await localTime({ timezone: 'Asia/Tokyo', at })).toEqual({
      timezone: 'Asia/Tokyo',
      time: '14:05',
      date: '2025-03-04',
      weekday: 'Tuesday',
      iso: '2025-03-04T14:05:09+09:00',
      utc_offset: '+09:00',
    });
    expect(await localTime({ timezone: 'America/St_Johns', hour12: true, at })).toMatchObject({ time: '1:35 AM', utc_offset: '-03:30', date: '2025-03-04' });
    expect(await localTime({ timezone: 'America/Los_Angeles', hour12: true, at: '2025-07-01T19:00:00Z' })).toMatchObject({ time: '12:00 PM', utc_offset: '-07:00' });
    expect(await localTime({ timezone: 'UTC', at })).toMatchObject({ time: '05:05', utc_offset: '+00:00' });
    const now = await localTime({ timezone: 'Europe/Paris' });
    expect(now.iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
  });

  it('local_time fails with BAD_TIMEZONE for a zone that does not exist', async () => {
    expect(await codeOf(localTime({ timezone: 'Mars/Olympus_Mons' }))).toBe('BAD_TIMEZONE');
    expect(await codeOf(localTime({ timezone: '' }))).toBe('BAD_TIMEZONE');
    expect(await codeOf(localTime({ timezone: 'UTC', at: 'yesterday-ish' }))).toBe('BAD_TIMESTAMP');
  });

  it('city_facts reports population, coordinates and zone, narrowed by country', async () => {
    const osaka = await cityFacts({ city: 'osaka' });
    expect(osaka).toMatchObject({ city: 'Osaka', country: 'Japan', iso2: 'JP', timezone: 'Asia/Tokyo' });
    expect(Number.isInteger(osaka.population) && osaka.population > 1_000_000).toBe(true);
    expect(await cityFacts({ city: 'London', country: 'CA' })).toMatchObject({ country: 'Canada', province: 'Ontario', same_name: 3 });
    expect(await cityFacts({ city: 'London', country: 'united kingdom' })).toMatchObject({ timezone: 'Europe/London' });
  });

  it('city_facts fails with CITY_NOT_FOUND and suggests close names', async () => {
    expect(await codeOf(cityFacts({ city: 'Osakka' }))).toBe('CITY_NOT_FOUND');
    expect(await messageOf(cityFacts({ city: 'Osakka' }))).toContain('"Osaka"');
    expect(await codeOf(cityFacts({ city: 'London', country: 'France' }))).toBe('CITY_NOT_FOUND');
  });

  it('distance is the great-circle distance', async () => {
    const london = await cityFacts({ city: 'London', country: 'GB' });
    const paris = await cityFacts({ city: 'Paris' });
    const { km, miles } = await distance({ from: london, to: paris });
    expect(km).toBeGreaterThan(330);
    expect(km).toBeLessThan(360);
    expect(miles).toBeCloseTo(km / 1.609344, 0);
    expect(await codeOf(distance({ from: { lat: 91, lng: 0 }, to: paris }))).toBe('BAD_COORDINATES');
  });
});

describe('text', () => {
  it('regex_extract returns every match with numbered and named groups', async () => {
    const result = await regexExtract({ text: 'on 2024-01-05 and 2025-12-31, not 99-1-1', pattern: '(?<year>\\d{4})-(?<month>\\d{2})-(\\d{2})' });
    expect(result.count).toBe(2);
    expect(result.truncated).toBe(false);
    expect(result.matches[0]).toEqual({ match: '2024-01-05', index: 3, captures: ['2024', '01', '05'], groups: { year: '2024', month: '01' } });
    expect(result.matches[1]?.groups).toEqual({ year: '2025', month: '12' });
    const optional = await regexExtract({ text: 'ab b', pattern: '(?<a>a)?b', flags: 'i' });
    expect(optional.matches.map((m) => m.groups.a)).toEqual(['a', null]);
  });

  it('regex_extract caps matches, pattern length and input length', async () => {
    const capped = await regexExtract({ text: 'a'.repeat(50), pattern: 'a', max_matches: 10 });
    expect(capped).toMatchObject({ count: 10, truncated: true });
    expect(await codeOf(regexExtract({ text: 'x', pattern: 'a'.repeat(1001) }))).toBe('PATTERN_TOO_LONG');
    expect(await codeOf(regexExtract({ text: 'x'.repeat(1_000_001), pattern: 'x' }))).toBe('TEXT_TOO_LONG');
    expect(await codeOf(regexExtract({ text: 'x', pattern: '(' }))).toBe('BAD_PATTERN');
    expect(await codeOf(regexExtract({ text: 'x', pattern: 'x', flags: 'gg' }))).toBe('BAD_PATTERN');
  });

  it('regex_extract stops a catastrophically backtracking pattern instead of hanging', async () => {
    const code = await codeOf(regexExtract({ text: `${'a'.repeat(40)}!`, pattern: '^(a+)+$', time_limit_ms: 200 }));
    expect(code).toBe('REGEX_TIMEOUT');
  });

  it('regex_extract stops when the step is cancelled', async () => {
    const controller = new AbortController();
    const call = regexExtract({ text: `${'a'.repeat(40)}!`, pattern: '^(a|aa)+$', time_limit_ms: 10_000 }, context({}, controller.signal));
    setTimeout(() => controller.abort(Object.assign(new Error('step timed out'), { code: 'TIMEOUT' })), 100);
    expect(await codeOf(call)).toBe('TIMEOUT');
  });

  it('word_stats counts words, lines and characters and ranks words', async () => {
    const stats = await wordStats({ text: 'The cat saw the other cat.\nCats don’t mind.\n', top: 2 });
    expect(stats).toMatchObject({ words: 9, lines: 2, unique_words: 7 });
    expect(stats.top_words).toEqual([
      { word: 'cat', count: 2 },
      { word: 'cats', count: 1 },
    ]);
    expect(stats.characters).toBe(44);
    expect((await wordStats({ text: '' })).lines).toBe(0);
    expect((await wordStats({ text: 'a\nb' })).lines).toBe(2);
    expect((await wordStats({ text: 'the the the', skip_common_words: false })).top_words).toEqual([{ word: 'the', count: 3 }]);
    expect(await codeOf(wordStats({}))).toBe('BAD_ARGUMENT');
    expect(await codeOf(wordStats({ text: 'a', path: 'b' }))).toBe('BAD_ARGUMENT');
  });

  it('render_template fills names, dotted paths and filters', async () => {
    const values = { city: 'Osaka', facts: { population: 2592413 }, tags: ['a', 'b'] };
    expect(await renderTemplate({ template: '{{ city | upper }}: {{ facts.population | number }} {{tags}} {{ tags.1 }}', values })).toEqual({
      text: 'OSAKA: 2,592,413 ["a","b"] b',
    });
    expect(await renderTemplate({ template: 'no placeholders' })).toEqual({ text: 'no placeholders' });
    expect(await renderTemplate({ template: '[{{ gone }}]', values, strict: false })).toEqual({ text: '[]' });
  });

  it('render_template names what is missing and refuses what is not a placeholder', async () => {
    expect(await codeOf(renderTemplate({ template: '{{ city }} {{ country }}', values: { city: 'Osaka' } }))).toBe('MISSING_VALUE');
    expect(await messageOf(renderTemplate({ template: '{{ country }}', values: { city: 'Osaka' } }))).toContain('"country"');
    expect(await codeOf(renderTemplate({ template: '{{ city | shout }}', values: { city: 'x' } }))).toBe('BAD_TEMPLATE');
    expect(await codeOf(renderTemplate({ template: '{{ a b }}', values: {} }))).toBe('BAD_TEMPLATE');
    expect(await codeOf(renderTemplate({ template: '{{ __proto__.polluted }}', values: {} }))).toBe('MISSING_VALUE');
    expect(await codeOf(renderTemplate({ template: '{{ city.constructor }}', values: { city: 'x' } }))).toBe('MISSING_VALUE');
  });

  it('json_query evaluates JSONPath, with filters and aggregates', async () => {
    const value = { files: [{ path: 'a', size: 10 }, { path: 'b', size: 300 }, { error: { code: 'NOT_TEXT' } }] };
    expect(await jsonQuery({ value, path: '$.files[*].path' })).toEqual({ matches: ['a', 'b'], count: 2 });
    expect(await jsonQuery({ value, path: '$.files[?(@.size > 100)].path' })).toMatchObject({ matches: ['b'] });
    expect(await jsonQuery({ value, path: '$.files[*].size', aggregate: 'sum' })).toMatchObject({ result: 310 });
    expect(await jsonQuery({ value, path: '$.files[*].size', aggregate: 'max' })).toMatchObject({ result: 300 });
    expect(await jsonQuery({ value, path: '$.files[*].size', aggregate: 'avg' })).toMatchObject({ result: 155 });
    expect(await jsonQuery({ value, path: '$.files[?(@.error)].error.code' })).toMatchObject({ matches: ['NOT_TEXT'] });
    expect(await jsonQuery({ value: [], path: '$[*]', aggregate: 'sum' })).toMatchObject({ result: 0, count: 0 });
    expect(await jsonQuery({ json: '{"a":[1,2]}', path: '$.a[1]' })).toMatchObject({ matches: [2] });
    expect(await jsonQuery({ value: null, path: '$' })).toEqual({ matches: [null], count: 1 });
    expect(await jsonQuery({ value: false, path: '$' })).toEqual({ matches: [false], count: 1 });
  });

  it('json_query reads RFC 9535 JSONPath, as chains do', async () => {
    const value = { files: [{ path: 'a.md', size: 10 }, { path: 'b.txt', size: '300' }, { path: 'c.md', size: 300 }] };
    // Strict comparison: the string '300' is not the number 300.
    expect(await jsonQuery({ value, path: '$.files[?@.size >= 100].path' })).toMatchObject({ matches: ['c.md'] });
    expect(await jsonQuery({ value, path: "$.files[?match(@.path, '.*[.]md')].path" })).toMatchObject({ matches: ['a.md', 'c.md'] });
    expect(await jsonQuery({ value, path: '$.files.length' })).toEqual({ matches: [], count: 0 });
    expect(await jsonQuery({ value, path: '$.files[-1].path' })).toEqual({ matches: ['c.md'], count: 1 });
    expect(await messageOf(jsonQuery({ value, path: '$.files[?(@.size === 10)]' }))).toContain("'===' is JavaScript");
  });

  it('json_query refuses bad JSON, calls and assignments in filters, and non-numbers to sum', async () => {
    expect(await codeOf(jsonQuery({ json: '{nope', path: '$' }))).toBe('BAD_JSON');
    expect(await codeOf(jsonQuery({ value: { s: 'x' }, path: '$[?(@.s.repeat(1e9))]' }))).toBe('BAD_PATH');
    expect(await codeOf(jsonQuery({ value: { s: 'x' }, path: '$[?(@.s = 1)]' }))).toBe('BAD_PATH');
    expect(await codeOf(jsonQuery({ value: {}, path: '$.constructor' }))).toBe('BAD_PATH');
    expect(await codeOf(jsonQuery({ value: ['a'], path: '$[*]', aggregate: 'sum' }))).toBe('NOT_NUMBERS');
    expect(await codeOf(jsonQuery({ value: {}, json: '{}', path: '$' }))).toBe('BAD_ARGUMENT');
  });
});

describe('files: confined to the root', () => {
  let base: string;
  let root: string;
  let outside: string;
  let env: ToolContext;

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolchain-files-')));
    root = join(base, 'root');
    outside = join(base, 'outside');
    await mkdir(join(root, 'docs', 'deep'), { recursive: true });
    await mkdir(join(root, 'node_modules', 'pkg'), { recursive: true });
    await mkdir(join(root, '.hidden'), { recursive: true });
    await mkdir(outside, { recursive: true });
    await fsWriteFile(join(root, 'readme.md'), '# Hello\n\nSome words here.\n');
    await fsWriteFile(join(root, 'docs', 'guide.md'), 'A guide.\n'.repeat(50));
    await fsWriteFile(join(root, 'docs', 'deep', 'notes.txt'), 'deep notes\n');
    await fsWriteFile(join(root, 'docs', 'data.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
    await fsWriteFile(join(root, 'node_modules', 'pkg', 'index.md'), 'ignored\n');
    await fsWriteFile(join(root, '.hidden', 'secret.md'), 'hidden\n');
    await fsWriteFile(join(outside, 'secret.txt'), 'top secret\n');
    await symlink(join(outside, 'secret.txt'), join(root, 'link-out.txt'));
    await symlink(outside, join(root, 'dir-out'));
    await symlink(join(root, 'readme.md'), join(root, 'link-in.md'));
    await symlink(join(outside, 'does-not-exist.txt'), join(root, 'dangling.txt'));
    env = context({ TOOLCHAIN_FILES_ROOT: root });
  });

  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('list_files matches globs, skips node_modules and hidden files, and totals sizes', async () => {
    const all = await listFiles({ patterns: ['**/*.md', '**/*.txt'] }, env);
    expect(all.files.map((f) => f.path)).toEqual(['docs/deep/notes.txt', 'docs/guide.md', 'link-in.md', 'readme.md']);
    expect(all.count).toBe(4);
    expect(all.largest?.path).toBe('docs/guide.md');
    expect(all.total_bytes).toBe(all.files.reduce((n, f) => n + f.size, 0));
    expect(all.truncated).toBe(false);
    expect((await listFiles({ patterns: ['docs/*'] }, env)).files.map((f) => f.path)).toEqual(['docs/data.bin', 'docs/guide.md']);
    expect((await listFiles({ patterns: ['**/*.md'], dot: true }, env)).files.map((f) => f.path)).toContain('.hidden/secret.md');
    expect((await listFiles({ patterns: ['**/*.md'], ignore: [] }, env)).files.map((f) => f.path)).toContain('node_modules/pkg/index.md');
    expect((await listFiles({ patterns: ['**/*.{md,txt}'], max_results: 2 }, env))).toMatchObject({ count: 2, truncated: true });
    expect((await listFiles({ patterns: ['nothing/**'] }, env)).count).toBe(0);
  });

  it('list_files never lists or follows links that lead outside the root', async () => {
    const all = await listFiles({ patterns: ['**/*'] }, env);
    const paths = all.files.map((f) => f.path);
    expect(paths).not.toContain('link-out.txt');
    expect(paths.some((p) => p.startsWith('dir-out/'))).toBe(false);
    expect(paths).toContain('link-in.md');
    expect(await codeOf(listFiles({ patterns: ['../outside/*'] }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(listFiles({ patterns: ['/etc/*'] }, env))).toBe('PATH_ESCAPE');
  });

  it('read_file reads text under the root', async () => {
    expect(await readFile({ path: 'readme.md' }, env)).toEqual({ path: 'readme.md', text: '# Hello\n\nSome words here.\n', bytes: 26 });
    expect((await readFile({ path: './docs/../readme.md' }, env)).path).toBe('readme.md');
    expect((await readFile({ path: join(root, 'readme.md') }, env)).path).toBe('readme.md');
    expect((await readFile({ path: 'link-in.md' }, env)).text).toContain('Hello');
  });

  it('read_file refuses ../ escapes, absolute paths outside and symbolic links out, with PATH_ESCAPE', async () => {
    expect(await codeOf(readFile({ path: '../outside/secret.txt' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(readFile({ path: 'docs/../../outside/secret.txt' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(readFile({ path: join(outside, 'secret.txt') }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(readFile({ path: '/etc/passwd' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(readFile({ path: 'link-out.txt' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(readFile({ path: 'dir-out/secret.txt' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(readFile({ path: 'dangling.txt' }, env))).toBe('PATH_ESCAPE');
  });

  it('read_file reports missing, binary, oversized and non-file paths by code', async () => {
    expect(await codeOf(readFile({ path: 'missing.md' }, env))).toBe('NOT_FOUND');
    expect(await codeOf(readFile({ path: 'docs/data.bin' }, env))).toBe('NOT_TEXT');
    expect(await codeOf(readFile({ path: 'docs/guide.md', max_bytes: 10 }, env))).toBe('FILE_TOO_LARGE');
    expect(await codeOf(readFile({ path: 'docs' }, env))).toBe('NOT_A_FILE');
    expect(await codeOf(readFile({ path: 'a\0b' }, env))).toBe('BAD_PATH');
  });

  it('the root comes from TOOLCHAIN_FILES_ROOT, or the working directory', async () => {
    expect(await codeOf(readFile({ path: 'x' }, context({ TOOLCHAIN_FILES_ROOT: join(base, 'nope') })))).toBe('ROOT_NOT_FOUND');
    const fromCwd = await readFile({ path: 'package.json' }, context({}));
    expect(fromCwd.text).toContain('"name": "toolchain"');
  });

  it('word_stats reads a file under the same root, with the same refusals', async () => {
    expect(await wordStats({ path: 'readme.md' }, env)).toMatchObject({ path: 'readme.md', words: 4, lines: 3 });
    expect(await codeOf(wordStats({ path: 'docs/data.bin' }, env))).toBe('NOT_TEXT');
    expect(await codeOf(wordStats({ path: '../outside/secret.txt' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(wordStats({ path: 'link-out.txt' }, env))).toBe('PATH_ESCAPE');
  });

  it('file_stats describes files, folders and links inside the root', async () => {
    expect(await fileStats({ path: 'readme.md' }, env)).toMatchObject({ path: 'readme.md', type: 'file', size: 26, link: false });
    expect(await fileStats({ path: 'docs' }, env)).toMatchObject({ type: 'directory' });
    expect(await fileStats({ path: '.' }, env)).toMatchObject({ path: '.', type: 'directory' });
    expect(await fileStats({ path: 'link-in.md' }, env)).toMatchObject({ path: 'readme.md', link: true });
    expect(await codeOf(fileStats({ path: 'missing' }, env))).toBe('NOT_FOUND');
    expect(await codeOf(fileStats({ path: 'link-out.txt' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(fileStats({ path: '..' }, env))).toBe('PATH_ESCAPE');
  });

  it('write_file writes, appends and creates inside the root', async () => {
    expect(await writeFile({ path: 'out/new/report.txt', content: 'one\n' }, env)).toEqual({ path: 'out/new/report.txt', bytes_written: 4, created: true });
    await writeFile({ path: 'out/new/report.txt', content: 'two\n', mode: 'append' }, env);
    expect(await fsReadFile(join(root, 'out', 'new', 'report.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(await codeOf(writeFile({ path: 'out/new/report.txt', content: 'x', mode: 'create' }, env))).toBe('ALREADY_EXISTS');
    expect(await writeFile({ path: 'out/new/report.txt', content: 'three' }, env)).toMatchObject({ created: false });
    expect(await fsReadFile(join(root, 'out', 'new', 'report.txt'), 'utf8')).toBe('three');
  });

  it('write_file refuses to write outside the root, through links included', async () => {
    expect(await codeOf(writeFile({ path: '../outside/evil.txt', content: 'x' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(writeFile({ path: 'link-out.txt', content: 'x' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(writeFile({ path: 'dir-out/evil.txt', content: 'x' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(writeFile({ path: 'dangling.txt', content: 'x' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(writeFile({ path: join(outside, 'evil.txt'), content: 'x' }, env))).toBe('PATH_ESCAPE');
    expect(await readdir(outside)).toEqual(['secret.txt']);
    expect(await fsReadFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });
});

describe('http', () => {
  let server: Server;
  let base: string;
  // The test server is on 127.0.0.1, which http_request refuses unless it is allowed.
  const local = context({ TOOLCHAIN_HTTP_ALLOW: '127.0.0.1' });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/json') {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ city: 'Osaka', n: 1 }));
      } else if (url.pathname === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('hello');
      } else if (url.pathname === '/echo') {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (c: string) => (body += c));
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, type: req.headers['content-type'] ?? null, token: req.headers['x-token'] ?? null, body }));
        });
      } else if (url.pathname === '/status') {
        res.writeHead(Number(url.searchParams.get('code')), { 'content-type': 'text/plain' });
        res.end(`status ${url.searchParams.get('code')}`);
      } else if (url.pathname === '/stream') {
        // 64 KiB chunks without a Content-Length, forever (until the client gives up).
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(64 * 1024);
        const push = (): void => {
          while (res.write(chunk)) if (res.destroyed) return;
          res.once('drain', push);
        };
        res.on('close', () => res.removeAllListeners('drain'));
        push();
      } else if (url.pathname === '/declared') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(50 * 1024 * 1024) });
        res.write('partial');
      } else if (url.pathname === '/slow') {
        setTimeout(() => res.end('late'), 5000).unref();
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });

  it('returns status, lower-case headers and a parsed JSON body', async () => {
    const res = await httpRequest({ url: `${base}/json` }, local);
    expect(res).toMatchObject({ status: 200, body: { city: 'Osaka', n: 1 }, url: `${base}/json` });
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.elapsed_ms).toBeGreaterThanOrEqual(0);
    expect((await httpRequest({ url: `${base}/text` }, local)).body).toBe('hello');
    expect((await httpRequest({ url: `${base}/json`, response_type: 'text' }, local)).body).toBe('{"city":"Osaka","n":1}');
  });

  it('sends JSON bodies, strings and headers', async () => {
    const json = await httpRequest({ url: `${base}/echo`, method: 'POST', body: { a: 1 }, headers: { 'x-token': 't' } }, local);
    expect(json.body).toEqual({ method: 'POST', type: 'application/json', token: 't', body: '{"a":1}' });
    const text = await httpRequest({ url: `${base}/echo`, method: 'PUT', body: 'plain', headers: { 'content-type': 'text/plain' } }, local);
    expect(text.body).toMatchObject({ method: 'PUT', type: 'text/plain', body: 'plain' });
    expect(await codeOf(httpRequest({ url: `${base}/echo`, body: 'x' }, local))).toBe('BAD_ARGUMENT');
  });

  it('fails 5xx, 408 and 429 with HTTP_ERROR and returns other 4xx unless asked', async () => {
    expect(await codeOf(httpRequest({ url: `${base}/status?code=503` }, local))).toBe('HTTP_ERROR');
    expect(await messageOf(httpRequest({ url: `${base}/status?code=500` }, local))).toContain('500');
    expect(await codeOf(httpRequest({ url: `${base}/status?code=429` }, local))).toBe('HTTP_ERROR');
    expect(await httpRequest({ url: `${base}/status?code=404` }, local)).toMatchObject({ status: 404, body: 'status 404' });
    expect(await codeOf(httpRequest({ url: `${base}/status?code=404`, fail_on_4xx: true }, local))).toBe('HTTP_CLIENT_ERROR');
  });

  it('stops reading at max_bytes, whether or not the size is declared', async () => {
    expect(await codeOf(httpRequest({ url: `${base}/stream`, max_bytes: 200_000 }, local))).toBe('RESPONSE_TOO_LARGE');
    expect(await codeOf(httpRequest({ url: `${base}/declared`, max_bytes: 1024 }, local))).toBe('RESPONSE_TOO_LARGE');
  });

  it('times out through timeout_ms (TIMEOUT) and through the step signal', async () => {
    expect(await codeOf(httpRequest({ url: `${base}/slow`, timeout_ms: 100 }, local))).toBe('TIMEOUT');
    const controller = new AbortController();
    setTimeout(() => controller.abort(Object.assign(new Error('step deadline'), { code: 'STEP_DEADLINE' })), 100);
    expect(await codeOf(httpRequest({ url: `${base}/slow` }, context({ TOOLCHAIN_HTTP_ALLOW: '127.0.0.1' }, controller.signal)))).toBe('STEP_DEADLINE');
  });

  it('fails unreachable servers with NETWORK_ERROR and other schemes with BAD_URL', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    expect(await codeOf(httpRequest({ url: `http://127.0.0.1:${port}/` }, local))).toBe('NETWORK_ERROR');
    expect(await codeOf(httpRequest({ url: 'file:///etc/passwd' }, local))).toBe('BAD_URL');
    expect(await codeOf(httpRequest({ url: 'not a url' }, local))).toBe('BAD_URL');
  });
});

describe('shell', () => {
  let root: string;
  let env: ToolContext;
  const node = process.execPath;

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'toolchain-shell-')));
    await mkdir(join(root, 'sub'));
    env = context({ TOOLCHAIN_FILES_ROOT: root, PATH: process.env.PATH });
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('passes arguments as they are, with no shell in between', async () => {
    const args = ['-e', 'console.log(JSON.stringify(process.argv.slice(1)))', 'a b', '$HOME', ';', 'rm -rf /', '*'];
    const result = await runCommand({ command: node, args }, env);
    expect(result).toMatchObject({ exit_code: 0, timed_out: false, output_truncated: false, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual(['a b', '$HOME', ';', 'rm -rf /', '*']);
  });

  it('reports exit codes, stderr and stdin, and runs in a folder under the root', async () => {
    const failed = await runCommand({ command: node, args: ['-e', 'process.stderr.write("bad"); process.exit(3)'] }, env);
    expect(failed).toMatchObject({ exit_code: 3, stderr: 'bad' });
    const echoed = await runCommand({ command: node, args: ['-e', 'process.stdin.pipe(process.stdout)'], stdin: 'piped' }, env);
    expect(echoed.stdout).toBe('piped');
    const where = await runCommand({ command: node, args: ['-e', 'console.log(process.cwd())'], cwd: 'sub' }, env);
    expect(where.stdout.trim()).toBe(join(root, 'sub'));
  });

  it('gives the program only PATH, HOME, LANG and the env it is given', async () => {
    process.env.TOOLCHAIN_TEST_SECRET = 'leak';
    try {
      const result = await runCommand({ command: node, args: ['-e', 'console.log(JSON.stringify(process.env))'], env: { EXTRA: '1' } }, env);
      const seen = JSON.parse(result.stdout) as Record<string, string>;
      expect(seen.EXTRA).toBe('1');
      expect(seen.TOOLCHAIN_TEST_SECRET).toBeUndefined();
      expect(Object.keys(seen).every((k) => ['PATH', 'HOME', 'LANG', 'EXTRA'].includes(k))).toBe(true);
    } finally {
      delete process.env.TOOLCHAIN_TEST_SECRET;
    }
  });

  it('stops a program at its timeout', async () => {
    const result = await runCommand({ command: node, args: ['-e', 'setTimeout(() => {}, 20000)'], timeout_ms: 300 }, env);
    expect(result).toMatchObject({ timed_out: true, exit_code: null, signal: 'SIGTERM' });
  });

  it('stops a program at its output limit', async () => {
    const result = await runCommand({ command: node, args: ['-e', 'setInterval(() => process.stdout.write("x".repeat(4096)), 1)'], max_output_bytes: 10_000 }, env);
    expect(result.output_truncated).toBe(true);
    expect(result.stdout.length).toBe(10_000);
    expect(result.timed_out).toBe(false);
  });

  it('stops a program when the step is cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(Object.assign(new Error('cancelled'), { code: 'ABORTED' })), 200);
    expect(await codeOf(runCommand({ command: node, args: ['-e', 'setTimeout(() => {}, 20000)'] }, context(env.env, controller.signal)))).toBe('ABORTED');
  });

  it('refuses a working directory outside the root and programs that do not exist', async () => {
    expect(await codeOf(runCommand({ command: node, args: ['-v'], cwd: '..' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(runCommand({ command: node, args: ['-v'], cwd: '/' }, env))).toBe('PATH_ESCAPE');
    expect(await codeOf(runCommand({ command: 'toolchain-no-such-program' }, env))).toBe('COMMAND_NOT_FOUND');
  });
});

describe('manifests', () => {
  const plugins = ['geo', 'text', 'files', 'http', 'shell'];

  it('mark exactly write_file and run_command dangerous', async () => {
    const dangerous: string[] = [];
    for (const p of plugins) for (const t of (await manifest(p)).tools) if (t.dangerous === true) dangerous.push(t.name);
    expect(dangerous.sort()).toEqual(['run_command', 'write_file']);
  });

  it('describe every tool and every parameter for a model to read, and point at handlers that exist', async () => {
    for (const p of plugins) {
      const m = await manifest(p);
      for (const tool of m.tools) {
        expect(tool.description, `${p}/${tool.name}`).toBeTruthy();
        for (const [key, schema] of Object.entries(tool.parameters?.properties ?? {})) {
          expect(schema.description, `${p}/${tool.name}.${key}`).toBeTruthy();
        }
        const handler = join(PLUGINS, p, tool.handler ?? `tools/${tool.name}.ts`);
        await expect(fsReadFile(handler, 'utf8')).resolves.toContain('export default');
      }
    }
  });

  it('list TOOLCHAIN_FILES_ROOT wherever a tool touches the files root', async () => {
    for (const p of ['files', 'text', 'shell']) expect((await manifest(p)).env).toContain('TOOLCHAIN_FILES_ROOT');
  });
});
