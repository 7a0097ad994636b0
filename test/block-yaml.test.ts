import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBlockYaml } from '../src/loader/block-yaml.js';
import { parseWithYaml } from '../src/loader/parse-yaml.js';
import { DEFAULT_LOAD_LIMITS } from '../src/loader/limits.js';
import { longChainYaml } from '../bench/workloads.js';

// The block-YAML reader (src/loader/block-yaml.ts) must give exactly what the yaml library gives
// — value, key order, the offsets behind every diagnostic's line and column — on every text it
// accepts, and give up on the rest. Held to yaml here on every YAML file in the repository, on
// random edits of them, and on generated documents.

const ROOT = join(import.meta.dirname, '..');

function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name.startsWith('dist')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yamlFiles(path, out);
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Checks the reader against yaml on `text`; true when the reader accepted it. */
function agrees(text: string, where: string): boolean {
  const block = readBlockYaml(text, DEFAULT_LOAD_LIMITS.maxDepth);
  if (block === undefined) return false;
  const full = parseWithYaml(text, 'x.yaml', DEFAULT_LOAD_LIMITS);
  const context = `${where}\n--- text ---\n${text}`;
  expect(full.result.diagnostics, context).toEqual([]);
  expect(block.value, context).toEqual(full.result.document?.value);
  // Key order is part of the value (outputs print in it).
  expect(JSON.stringify(block.value), context).toBe(JSON.stringify(full.result.document?.value));
  expect(sorted(block.values), context).toEqual(sorted(full.facts!.values));
  expect(sorted(block.keys), context).toEqual(sorted(full.facts!.keys));
  // yaml records a line start at the very end of the text in some cases and not in others; no offset is ever there.
  expect(block.lineStarts, context).toEqual(full.lineCounter!.lineStarts.filter((o) => o < text.length || o === 0));
  return true;
}

function sorted(map: ReadonlyMap<string, number>): [string, number][] {
  return [...map].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
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
  '.inf', '-.Inf', '.nan', 'null', 'Null', 'NULL', '~', 'true', 'False', 'TRUE', 'yes', 'no', 'on', 'http://x.io/a#b', 'a:b', 'a - b', "it's", 'x "q" y',
  '"double"', '"esc \\" \\\\ \\n \\t \\u00e9 \\x41"', "'single ''q'''", "''", '""', '"# not a comment"', '大阪', 'a #comment', 'trailing   ', '-x', '1_000', '12:30',
  '[a, b, c]', '[]', '{}', '{ a: 1, b: [x, "y"], c: { d: null } }', '[1, [2, [3]], {k: v}]', '[ a , b , ]', '{ p: q, }', '[http://x]', '{a: b: c}', '[a, b',
  '{"k": "v", \'q\': 1}', '[ -1, -x, "a,b" ]', '[a: b]', '{ k: }', '{ : v }', "'a' 'b'", '"x" # c', '[- a]', '{a: 1}x', '[1]  # c', 'a  b  ', '- - x', 'x: y: z',
  '&anchor v', '*alias', '!tag v', '? complex', '@at', '`tick`', '%pct', 'a: b', '- x',
];
const KEYS = ['name', 'tool', 'input_map', 'a', 'b_c', 'x-y', 'with space', '1', '2.0', 'null', 'true', '~', '"quoted key"', "'single key'", '$.k', 'a.b/c~d', '-dash', '大阪'];

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

describe('the block-YAML reader agrees with yaml', () => {
  const files = yamlFiles(ROOT);

  it('on every YAML file in the repository, and reads every shipped chain and manifest itself', () => {
    let accepted = 0;
    for (const file of files) if (agrees(readFileSync(file, 'utf8'), relative(ROOT, file))) accepted++;
    for (const file of files.filter((f) => /^(chains|plugins)\//.test(relative(ROOT, f)))) {
      expect(readBlockYaml(readFileSync(file, 'utf8'), 64), `${relative(ROOT, file)} is left to yaml`).toBeDefined();
    }
    expect(accepted).toBeGreaterThan(files.length / 2);
    expect(agrees(longChainYaml(300), 'bench workload')).toBe(true);
  });

  it('on random edits of those files', () => {
    const rnd = random(7);
    const texts = files.map((f) => readFileSync(f, 'utf8')).filter((t) => t.length < 20_000);
    const alphabet = [' ', '\n', ':', '-', '#', "'", '"', '|', '>', '[', ']', '{', '}', ',', 'a', '1', '.', '  ', '- ', ': '];
    let accepted = 0;
    for (let n = 0; n < 3000; n++) {
      const text = pick(rnd, texts);
      const at = Math.floor(rnd() * text.length);
      const edit = rnd() < 0.5 ? pick(rnd, alphabet) : '';
      const cut = rnd() < 0.6 ? 1 + Math.floor(rnd() * 3) : 0;
      if (agrees(text.slice(0, at) + edit + text.slice(at + cut), `edit ${n} at ${at}`)) accepted++;
    }
    expect(accepted).toBeGreaterThan(1000);
  });

  it('on generated documents', () => {
    const rnd = random(42);
    let accepted = 0;
    for (let n = 0; n < 3000; n++) if (agrees(generate(rnd, 0, 0), `document ${n}`)) accepted++;
    expect(accepted).toBeGreaterThan(500);
  });

  it('gives up on what only yaml reads', () => {
    for (const text of ['a: &x 1\nb: *x\n', 'a: !!str 1\n', 'a: 1\n---\nb: 2\n', 'a: 1\na: 2\n', '__proto__: 1\n', 'a:\tb\n', 'a: 1\r\nb: 2\r\n', 'a: b\n  c\n', 'a: "b\n  c"\n', '? a\n: b\n']) {
      expect(readBlockYaml(text, 64), JSON.stringify(text)).toBeUndefined();
    }
  });
});
