import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { parseYaml } from '../../src/loader/index.js';
import { childPointer } from '../../src/common/json-pointer.js';
import { longChainYaml } from '../../bench/workloads.js';

// What the loader gives for a YAML text is what the yaml library reads in it — the value, its key
// order, the line and column of every key and value — checked on every YAML file in the
// repository, on random edits of them (which must never throw), and on generated documents.

const ROOT = join(import.meta.dirname, '..', '..');

function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name.startsWith('dist')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yamlFiles(path, out);
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out;
}

interface Position {
  readonly line: number;
  readonly col: number;
}

/** Where yaml's own document puts every value and key, by JSON pointer (keys of scalar keys only). */
function yamlPositions(text: string): { values: Map<string, Position>; keys: Map<string, Position> } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false });
  const at = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return line === 0 ? { line: 1, col: offset + 1 } : { line, col };
  };
  const values = new Map<string, Position>();
  const keys = new Map<string, Position>();
  const walk = (node: unknown, pointer: string): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair) || !isScalar(pair.key)) continue;
        const child = childPointer(pointer, String(pair.key.value ?? ''));
        const key = pair.key as Node;
        if (key.range) keys.set(child, at(key.range[0]));
        const start = (pair.value as Node | null)?.range?.[0] ?? key.range?.[0];
        if (start !== undefined) values.set(child, at(start));
        walk(pair.value, child);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const child = childPointer(pointer, i);
        const start = (item as Node | null)?.range?.[0];
        if (start !== undefined) values.set(child, at(start));
        walk(item, child);
      });
    }
  };
  walk(doc.contents, '');
  return { values, keys };
}

/** The loader and yaml agree on `text`: same value, same key order, same positions. */
function agrees(text: string, where: string): void {
  const context = `${where}\n--- text ---\n${text}`;
  const loaded = parseYaml(text, 'x.yaml');
  expect(loaded.diagnostics, context).toEqual([]);
  const value = loaded.document?.value;
  const reference = parseDocument(text).toJS();
  expect(value, context).toEqual(reference);
  // Key order is part of the value (outputs print in it).
  expect(JSON.stringify(value), context).toBe(JSON.stringify(reference));
  const map = loaded.document!.sourceMap;
  const { values, keys } = yamlPositions(text);
  for (const [pointer, position] of values) expect(map.valueAt(pointer), `${context}\nvalue ${pointer}`).toEqual(position);
  for (const [pointer, position] of keys) expect(map.keyAt(pointer), `${context}\nkey ${pointer}`).toEqual(position);
}

/** A small seeded generator (mulberry32): the same documents on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SCALARS = [
  'plain words', 'echo', '$.seed', '$.s1.a', "{{ $.seed }}-3", '100ms', '3', '-7', '+4', '0', '-0', '007', '0o17', '0x1F', '1.5', '.5', '1.', '1e3', '-2.5E-2',
  'null', 'Null', 'NULL', '~', 'true', 'False', 'TRUE', 'yes', 'no', 'on', 'http://x.io/a#b', 'a:b', 'a - b', "it's", 'x "q" y',
  '"double"', '"esc \\" \\\\ \\n \\t \\u00e9 \\x41"', "'single ''q'''", "''", '""', '"# not a comment"', '大阪', 'a #comment', 'trailing   ', '-x', '1_000', '12:30',
  '[a, b, c]', '[]', '{}', '{ a: 1, b: [x, "y"], c: { d: null } }', '[1, [2, [3]], {k: v}]', '[ a , b , ]', '{ p: q, }', '[http://x]',
  '{"k": "v", \'q\': 1}', '[ -1, -x, "a,b" ]', '{ k: }', '"x" # c', '[1]  # c', 'a  b  ', '- - x', '&anchor v', '!!str 1',
];
const KEYS = ['name', 'tool', 'input_map', 'a', 'b_c', 'x-y', 'with space', '1', '2.0', 'true', '"quoted key"', "'single key'", '$.k', 'a.b/c~d', '-dash', '大阪'];

function pick<T>(rnd: () => number, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)]!;
}

/** A random block document: maps, sequences, compact mappings, block scalars, comments and blank lines. */
function generate(rnd: () => number, indent: number, depth: number): string {
  const pad = ' '.repeat(indent);
  let out = '';
  const sequence = depth > 0 && rnd() < 0.35;
  const entries = 1 + Math.floor(rnd() * 4);
  const used = new Set<string>();
  for (let i = 0; i < entries; i++) {
    if (rnd() < 0.1) out += rnd() < 0.5 ? '\n' : `${pad}# a comment\n`;
    let head: string;
    if (sequence) head = `${pad}-`;
    else {
      let key = pick(rnd, KEYS);
      while (used.has(key)) key = `${key}x`;
      used.add(key);
      head = `${pad}${key}:`;
    }
    const r = rnd();
    if (r < 0.45 || depth >= 4) out += `${head} ${pick(rnd, SCALARS)}${rnd() < 0.1 ? '   # note' : ''}\n`;
    else if (r < 0.55) out += `${head}\n`;
    else if (r < 0.7) {
      const style = pick(rnd, ['|', '|-', '>', '>-', '|+', '>2']);
      const lines = ['first line', '', 'second  line', '  more indented', '# hash', 'last'].filter(() => rnd() < 0.7);
      if (lines.length === 0) lines.push('only');
      out += `${head} ${style}\n${lines.map((l) => (l === '' ? '' : `${pad}  ${l}`)).join('\n')}\n${rnd() < 0.3 ? '\n' : ''}`;
    } else if (sequence && r < 0.8) {
      const inner = generate(rnd, indent + 2, depth + 1);
      out += `${head} ${inner.slice(indent + 2)}`;
    } else {
      const deeper = !sequence && rnd() < 0.2 ? indent : indent + 2;
      out += `${head}${rnd() < 0.2 ? '   # why' : ''}\n${generate(rnd, deeper, depth + 1)}`;
    }
  }
  return out;
}

describe('the loader reads YAML as the yaml library does', () => {
  const files = yamlFiles(ROOT);
  // The files made to be rejected; what the loader says about them is tested with the loader.
  const rejected = /^test\/fixtures\/(?:bad\/|loader\/(?:forbidden-keys|tabs|two-documents)\.yaml$)/;
  const valid = files.filter((f) => !rejected.test(relative(ROOT, f)));

  it('on every YAML file in the repository, and on the bench workload', () => {
    expect(valid.length).toBeGreaterThan(20);
    for (const file of valid) agrees(readFileSync(file, 'utf8'), relative(ROOT, file));
    agrees(longChainYaml(300), 'bench workload');
  });

  it('never throws on random edits of those files, and places every problem inside the text', () => {
    const rnd = random(7);
    const texts = files.map((f) => readFileSync(f, 'utf8')).filter((t) => t.length < 20_000);
    const alphabet = [' ', '\n', ':', '-', '#', "'", '"', '|', '>', '[', ']', '{', '}', ',', 'a', '1', '.', '  ', '- ', ': ', '\t', '&', '*'];
    let failed = 0;
    for (let n = 0; n < 1000; n++) {
      const text = pick(rnd, texts);
      const at = Math.floor(rnd() * text.length);
      const edit = rnd() < 0.5 ? pick(rnd, alphabet) : '';
      const cut = rnd() < 0.6 ? 1 + Math.floor(rnd() * 3) : 0;
      const edited = text.slice(0, at) + edit + text.slice(at + cut);
      const result = parseYaml(edited, 'edited.yaml');
      const lines = edited.split('\n').length;
      for (const d of result.diagnostics) {
        expect(d.file).toBe('edited.yaml');
        expect(d.line, JSON.stringify(d)).toBeGreaterThanOrEqual(1);
        expect(d.line, JSON.stringify(d)).toBeLessThanOrEqual(lines);
        expect(d.col, JSON.stringify(d)).toBeGreaterThanOrEqual(1);
      }
      if (result.diagnostics.some((d) => d.severity === 'error')) failed++;
      else expect(result.document, `edit ${n} at ${at}`).toBeDefined();
    }
    expect(failed).toBeGreaterThan(0);
  });

  it('on generated documents', () => {
    const rnd = random(42);
    let compared = 0;
    for (let n = 0; n < 1000; n++) {
      const text = generate(rnd, 0, 0);
      // A generated document can be invalid YAML (a duplicate key, a scalar that is not one): the loader must then say so.
      if (parseDocument(text).errors.length > 0) {
        const errors = parseYaml(text, 'x.yaml').diagnostics.filter((d) => d.severity === 'error');
        expect(errors.length, `document ${n}\n${text}`).toBeGreaterThan(0);
        continue;
      }
      agrees(text, `document ${n}`);
      compared++;
    }
    expect(compared).toBeGreaterThan(500);
  });

  it('reads anchors, tags, multi-line scalars, tabs after a colon, CRLF line ends and complex keys', () => {
    const cases: [string, unknown][] = [
      ['a: &x 1\nb: *x\n', { a: 1, b: 1 }],
      ['a: !!str 1\n', { a: '1' }],
      ['a:\tb\n', { a: 'b' }],
      ['a: 1\r\nb: 2\r\n', { a: 1, b: 2 }],
      ['a: b\n  c\n', { a: 'b c' }],
      ['a: "b\n  c"\n', { a: 'b c' }],
      ['? a\n: b\n', { a: 'b' }],
      ['a: |+\n  kept\n\nb: 1\n', { a: 'kept\n\n', b: 1 }],
    ];
    for (const [text, value] of cases) {
      const result = parseYaml(text, 'x.yaml');
      expect(result.diagnostics, JSON.stringify(text)).toEqual([]);
      expect(result.document?.value, JSON.stringify(text)).toEqual(value);
    }
    expect(parseYaml('a: 1\r\nb: 2\r\n', 'x.yaml').document?.sourceMap.valueAt('/b')).toEqual({ line: 2, col: 4 });
  });

  it('reports a second document, a duplicate key and a forbidden key at the place they start', () => {
    const codes = (text: string) => parseYaml(text, 'x.yaml').diagnostics.map((d) => [d.code, d.line, d.col]);
    expect(codes('a: 1\n---\nb: 2\n')).toEqual([['YAML_MULTI_DOCUMENT', 2, 1]]);
    expect(codes('a: 1\na: 2\n')).toEqual([['YAML_DUPLICATE_KEY', 2, 1]]);
    expect(codes('__proto__: 1\n')).toEqual([['FORBIDDEN_KEY', 1, 1]]);
  });
});
