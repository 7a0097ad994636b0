import { mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/common/errors.js';
import { DEFAULT_LOAD_LIMITS, loadYamlFile, loadYamlFileSync, parseYaml } from '../../src/loader/index.js';
import { openDiskCache } from '../../src/cache/index.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'loader');
const fixture = (name: string): string => join(fixtures, name);

const tmp = mkdtempSync(join(tmpdir(), 'toolchain-loader-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function only(diagnostics: readonly Diagnostic[], code: Diagnostic['code']): Diagnostic[] {
  return diagnostics.filter((d) => d.code === code);
}

function where(d: Diagnostic | undefined): { code?: string; line?: number; col?: number } {
  return { code: d?.code, line: d?.line, col: d?.col };
}

describe('DEFAULT_LOAD_LIMITS', () => {
  it('is 1 MiB, 64 levels, 100 aliases, 100 diagnostics', () => {
    expect(DEFAULT_LOAD_LIMITS).toEqual({ maxBytes: 1024 * 1024, maxDepth: 64, maxAliases: 100, maxDiagnostics: 100 });
  });
});

describe('valid files', () => {
  it('loads a chain with its value and no diagnostics', async () => {
    const result = await loadYamlFile(fixture('chain.yaml'));
    expect(result.diagnostics).toEqual([]);
    const value = result.document?.value as { name: string; steps: Array<Record<string, unknown>> };
    expect(value.name).toBe('city_brief');
    expect(value.steps[1]?.tool).toBe('local_time');
    expect(result.document?.file).toBe(fixture('chain.yaml'));
  });

  it('maps pointers to exact value and key positions', async () => {
    const result = await loadYamlFile(fixture('chain.yaml'));
    const map = result.document!.sourceMap;
    expect(map.valueAt('/steps/1/tool')).toEqual({ line: 13, col: 11 });
    expect(map.keyAt('/steps/1/imput_map')).toEqual({ line: 14, col: 5 });
    expect(map.keyAt('/steps/1/imput_map/a~1b~0c')).toEqual({ line: 16, col: 7 });
    expect(map.valueAt('/steps/2')).toEqual({ line: 17, col: 5 });
    expect(map.valueAt('/steps/2/input_map/city')).toEqual({ line: 19, col: 24 });
    expect(map.valueAt('/inputs/hour12/default')).toEqual({ line: 6, col: 37 });
    expect(map.valueAt('')).toEqual({ line: 2, col: 1 });
  });

  it('falls back to the nearest ancestor, keyAt to valueAt, and the root to 1:1', () => {
    const map = loadYamlFileSync(fixture('chain.yaml')).document!.sourceMap;
    expect(map.valueAt('/steps/1/imput_map/nope/deeper')).toEqual({ line: 15, col: 7 });
    expect(map.valueAt('/steps/9/tool')).toEqual(map.valueAt('/steps'));
    expect(map.valueAt('/steps')).toEqual({ line: 8, col: 3 });
    expect(map.valueAt('/nothing')).toEqual({ line: 2, col: 1 });
    // Sequence items have no key: keyAt falls back to where the item starts.
    expect(map.keyAt('/steps/1')).toEqual({ line: 12, col: 5 });
    expect(map.keyAt('/steps/1/missing')).toEqual({ line: 12, col: 5 });

    const empty = parseYaml('', 'empty.yaml').document!.sourceMap;
    expect(empty.valueAt('')).toEqual({ line: 1, col: 1 });
    expect(empty.keyAt('/a/b')).toEqual({ line: 1, col: 1 });
  });

  it('gives null for empty, comment-only and null documents', () => {
    for (const text of ['', '# just a comment\n# and another\n', '~\n', '---\n...\n']) {
      const result = parseYaml(text, 'x.yaml');
      expect(result.diagnostics).toEqual([]);
      expect(result.document?.value).toBeNull();
    }
  });

  it('resolves a few aliases within the limit', () => {
    const result = parseYaml('base: &b {x: 1}\nuse: [*b, *b]\n', 'a.yaml');
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.value).toEqual({ base: { x: 1 }, use: [{ x: 1 }, { x: 1 }] });
  });
});

describe('syntax errors', () => {
  it('rejects tabs used for indentation', async () => {
    const result = await loadYamlFile(fixture('tabs.yaml'));
    expect(result.document).toBeUndefined();
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_SYNTAX', line: 3, col: 1 });
    expect(result.diagnostics[0]?.file).toBe(fixture('tabs.yaml'));
  });

  it('rejects an unclosed bracket', () => {
    const result = parseYaml('name: x\nsteps: [a, b\ninputs: {}\n', 'u.yaml');
    expect(result.document).toBeUndefined();
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_SYNTAX', line: 3, col: 1 });
  });

  it('reports the first syntax error and how many followed it (one stray bracket would otherwise cascade)', () => {
    const result = parseYaml('a:\n\t- x\nb: "open\n', 's.yaml');
    const syntax = only(result.diagnostics, 'YAML_SYNTAX');
    expect(syntax.map((d) => d.line)).toEqual([2]);
    expect(syntax[0]?.message).toMatch(/\(and \d+ more YAML errors? after it, most likely caused by this one\)$/);
    const stray = parseYaml('version: "1"\nname: b\nsteps:\n  - name: s\n    tool: echo\n    input_map: { x: [1, 2 }\n  - name: t\n    tool: echo\n', 'b.yaml');
    expect(only(stray.diagnostics, 'YAML_SYNTAX').map((d) => [d.line, d.col])).toEqual([[6, 27]]);
  });

  it('rejects an alias with no anchor', () => {
    const result = parseYaml('a: 1\nb: *nope\n', 'n.yaml');
    expect(result.document).toBeUndefined();
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_SYNTAX', line: 2, col: 4 });
  });

  it('rejects a second document at its start', async () => {
    const result = await loadYamlFile(fixture('two-documents.yaml'));
    expect(result.diagnostics).toHaveLength(1);
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_MULTI_DOCUMENT', line: 3, col: 1 });
  });

  it('rejects duplicate keys at the second key', () => {
    const result = parseYaml('name: a\nsteps:\n  - name: s\n    tool: t\n    tool: u\n', 'd.yaml');
    expect(result.diagnostics).toHaveLength(1);
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_DUPLICATE_KEY', line: 5, col: 5 });
    expect(result.diagnostics[0]?.pointer).toBe('/steps/0/tool');
  });
});

describe('hostile input', () => {
  it('stops an alias bomb (9 levels of 9 aliases)', () => {
    let text = 'a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
    for (let i = 1; i < 9; i++) {
      text += `a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(', ')}]\n`;
    }
    const result = parseYaml(text, 'bomb.yaml');
    expect(result.document).toBeUndefined();
    expect(result.diagnostics).toHaveLength(1);
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_LIMIT', line: 2, col: 10 });
  });

  it('stops an alias that contains itself', () => {
    const result = parseYaml('a: &x [1, *x]\n', 'r.yaml');
    expect(result.document).toBeUndefined();
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_LIMIT', line: 1, col: 11 });
  });

  it.each([
    ['list', '[', ']'],
    ['map', '{a: ', '}'],
  ])('stops 5,000-deep flow nesting (%s) where the limit is crossed', (_kind, open, close) => {
    const text = `x: 1\ny: ${open.repeat(5000)}1${close.repeat(5000)}\n`;
    const result = parseYaml(text, 'deep.yaml');
    expect(result.document).toBeUndefined();
    // The root map is level 1, so the 64th bracket is level 65.
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_LIMIT', line: 2, col: 4 + 63 * open.length });
  });

  it('stops 5,000-deep compact block sequences', () => {
    const result = parseYaml(`${'- '.repeat(5000)}x\n`, 'deep.yaml');
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_LIMIT', line: 1, col: 129 });
  });

  it('stops deep indented block maps at the line that crosses the limit', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}k${i}:`);
    const result = parseYaml(`${lines.join('\n')} end\n`, 'deep.yaml');
    expect(where(result.diagnostics[0])).toEqual({ code: 'YAML_LIMIT', line: 65, col: 65 });
  });

  it('accepts nesting at the limit and respects a custom limit', () => {
    const atLimit = `${'['.repeat(64)}${']'.repeat(64)}`;
    expect(parseYaml(atLimit, 'ok.yaml').diagnostics).toEqual([]);
    expect(where(parseYaml(atLimit, 'ok.yaml', { maxDepth: 10 }).diagnostics[0])).toEqual({
      code: 'YAML_LIMIT',
      line: 1,
      col: 11,
    });
    const block = 'a:\n  b:\n    - c: 1\n      d: [1, {e: 2}]\n';
    // a, b, the sequence, the item's map, the flow list, the flow map: six levels.
    expect(parseYaml(block, 'ok.yaml', { maxDepth: 6 }).diagnostics).toEqual([]);
    expect(where(parseYaml(block, 'ok.yaml', { maxDepth: 5 }).diagnostics[0])).toEqual({
      code: 'YAML_LIMIT',
      line: 4,
      col: 14,
    });
  });

  it('rejects a 6 GiB file by its size without reading it', async () => {
    // Sparse: no disk used. A loader that read it would fail on a string past V8's limit, not with FILE_TOO_LARGE.
    const path = join(tmp, 'huge.yaml');
    writeFileSync(path, 'a: [');
    truncateSync(path, 6 * 1024 ** 3);
    const result = await loadYamlFile(path);
    const sync = loadYamlFileSync(path);
    for (const r of [result, sync]) {
      expect(r.document).toBeUndefined();
      expect(r.diagnostics).toHaveLength(1);
      expect(where(r.diagnostics[0])).toEqual({ code: 'FILE_TOO_LARGE', line: 1, col: 1 });
      expect(r.diagnostics[0]?.file).toBe(path);
    }
  });

  it('rejects a 20 MB string by its length', () => {
    const result = parseYaml(`a: "${'x'.repeat(20 * 1024 * 1024)}"\n`, 'big.yaml');
    expect(result.diagnostics).toHaveLength(1);
    expect(where(result.diagnostics[0])).toEqual({ code: 'FILE_TOO_LARGE', line: 1, col: 1 });
  });

  it('counts bytes, not characters', () => {
    expect(parseYaml('a: ééé\n', 'b.yaml', { maxBytes: 8 }).diagnostics[0]?.code).toBe('FILE_TOO_LARGE');
    expect(parseYaml('a: ééé\n', 'b.yaml', { maxBytes: 10 }).diagnostics).toEqual([]);
  });

  it('rejects __proto__ and constructor keys nested in steps, without polluting anything', async () => {
    const result = await loadYamlFile(fixture('forbidden-keys.yaml'));
    const forbidden = only(result.diagnostics, 'FORBIDDEN_KEY');
    expect(forbidden.map((d) => [d.pointer, d.line, d.col])).toEqual([
      ['/steps/0/input_map/__proto__', 6, 7],
      ['/steps/1/constructor', 10, 5],
      ['/steps/1/constructor/prototype', 11, 7],
    ]);
    expect(result.diagnostics).toHaveLength(3);
    const value = result.document?.value as { steps: Array<Record<string, unknown>> };
    const inputMap = value.steps[0]?.input_map as Record<string, unknown>;
    expect(Object.getPrototypeOf(inputMap)).toBe(Object.prototype);
    expect(Object.keys(inputMap)).toEqual([]);
    expect(Object.hasOwn(value.steps[1]!, 'constructor')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Copying the value the naive way must not reach a prototype either.
    expect(Object.getPrototypeOf(Object.assign({}, inputMap))).toBe(Object.prototype);
  });

  it('rejects a forbidden key at the top level of a flow map', () => {
    const result = parseYaml('{a: 1, prototype: 2}\n', 'p.yaml');
    expect(result.diagnostics.map((d) => [d.code, d.line, d.col, d.pointer])).toEqual([['FORBIDDEN_KEY', 1, 8, '/prototype']]);
    expect(result.document?.value).toEqual({ a: 1 });
  });
});

describe('files that cannot be read', () => {
  it('reports a missing file with the path as given', async () => {
    const path = join(tmp, 'does-not-exist.yaml');
    for (const result of [await loadYamlFile(path), loadYamlFileSync(path)]) {
      expect(result.document).toBeUndefined();
      expect(result.diagnostics).toHaveLength(1);
      expect(result.diagnostics[0]).toMatchObject({ code: 'FILE_UNREADABLE', file: path, line: 1, col: 1 });
    }
  });

  it('reports a directory as unreadable', async () => {
    expect((await loadYamlFile(tmp)).diagnostics[0]?.code).toBe('FILE_UNREADABLE');
    expect(loadYamlFileSync(tmp).diagnostics[0]?.code).toBe('FILE_UNREADABLE');
  });
});

describe('the parse cache', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'toolchain-parse-cache-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const cache = openDiskCache(cacheDir)!;
  const parse = (text: string, file: string) => parseYaml(text, file, undefined, cache);

  it('gives the same value and positions on a hit, under the file name asked for; a file with errors is not kept', () => {
    const text = `name: cached_${Date.now()}\nsteps:\n  - name: a\n    tool: echo\n`;
    const first = parse(text, 'first.yaml');
    expect(readdirSync(join(cacheDir, 'yaml'))).toHaveLength(1);
    const second = parse(text, 'second.yaml');
    expect(second.document?.value).toEqual(first.document?.value);
    expect(second.document?.value).not.toBe(first.document?.value);
    expect(second.document?.sourceMap.valueAt('/steps/0/tool')).toEqual(first.document?.sourceMap.valueAt('/steps/0/tool'));
    expect(second.document?.sourceMap.keyAt('/steps/0/name')).toEqual({ line: 3, col: 5 });
    expect(second.diagnostics).toEqual([]);
    const broken = parse(`${text}    tool: again\n`, 'broken.yaml');
    expect(broken.diagnostics[0]).toMatchObject({ code: 'YAML_DUPLICATE_KEY', line: 5, file: 'broken.yaml' });
    expect(readdirSync(join(cacheDir, 'yaml'))).toHaveLength(1);
  });

  it('does not cache what JSON cannot hold', () => {
    const text = `x_${Date.now()}: .inf\ny: .nan\n`;
    parse(text, 'a.yaml');
    const again = parse(text, 'a.yaml').document?.value as Record<string, number>;
    expect(Object.values(again)[0]).toBe(Infinity);
    expect(Number.isNaN(again.y)).toBe(true);
  });
});
