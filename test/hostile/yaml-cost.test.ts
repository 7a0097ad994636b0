import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { mkdtempSync, rmSync } from 'node:fs';
import { openDiskCache } from '../../src/cache/disk-cache.js';
import { scanTokens } from '../../src/loader/depth-check.js';
import { yamlCacheKey } from '../../src/loader/parse-yaml.js';
import { DEFAULT_LOAD_LIMITS, loadYamlFile, parseYaml } from '../../src/loader/index.js';
import { runCli } from '../helpers/run-cli.js';

// A 1 MB file of `[`×60 + `---` repeated (17,000 documents, each just under the
// depth limit) took 63 s and 2.9 GB to load and printed 948k diagnostics, and every run in that
// folder paid it again. Only the first document is parsed now, unclosed brackets count across
// document markers, each file reports at most 100 problems plus a count, and failed parses are
// never cached.

const MB = 1024 * 1024 - 64;
const fill = (unit: string): string => unit.repeat(Math.floor(MB / unit.length));
const MAX = DEFAULT_LOAD_LIMITS.maxDiagnostics;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolchain-yaml-cost-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('YAML parse cost inside the size limit', () => {
  it('the 1 MB "[×60 + ---" file: only the first document is parsed, a handful of diagnostics', async () => {
    const file = join(dir, 'brackets.yaml');
    await writeFile(file, fill(`${'['.repeat(60)}\n---\n`));
    const result = await loadYamlFile(file);
    expect(result.document).toBeUndefined();
    expect(result.diagnostics.length).toBeLessThanOrEqual(MAX + 1);
    expect(result.diagnostics.map((d) => d.code)).toContain('YAML_MULTI_DOCUMENT');
    expect(result.diagnostics.find((d) => d.code === 'YAML_MULTI_DOCUMENT')).toMatchObject({ line: 2, col: 1 });
  });

  it('validate on a folder holding that file reports it in one short list and checks the other chains', async () => {
    const chains = join(dir, 'chains');
    await import('node:fs/promises').then((fs) => fs.mkdir(chains));
    await writeFile(join(chains, 'bomb.yaml'), fill(`${'['.repeat(60)}\n---\n`));
    await writeFile(join(chains, 'ok.yaml'), 'name: ok\nsteps:\n  - name: a\n    tool: nothing_here\n');
    const out = await runCli(['validate', '--chains', chains, '--plugins', join(dir, 'none')]);
    expect(out.code).toBe(2);
    const lines = out.stdout.trim().split('\n');
    expect(lines.filter((l) => l.includes('bomb.yaml')).length).toBeLessThanOrEqual(MAX + 1);
    expect(lines.some((l) => l.includes('ok.yaml') && l.includes('UNKNOWN_TOOL'))).toBe(true);
  });

  it('a megabyte of "]" reports the first error, then says that reading stopped and how many more there were at least', () => {
    const result = parseYaml(fill(']'), 'closers.yaml');
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({ code: 'YAML_SYNTAX', line: 1, col: 1 });
    expect(result.diagnostics[0]!.message).toMatch(/\(and at least \d+ more YAML errors after it, most likely caused by this one; reading stopped there\)$/);
  });

  it('duplicate keys: 100 listed at the repeated key, the rest counted exactly', () => {
    const text = 'a: 1\n'.repeat(5000);
    const result = parseYaml(text, 'dups.yaml');
    expect(result.diagnostics).toHaveLength(MAX + 1);
    expect(result.diagnostics[0]).toMatchObject({ code: 'YAML_DUPLICATE_KEY', line: 2, col: 1, pointer: '/a' });
    expect(result.diagnostics[MAX]!.message).toContain(`and ${5000 - 1 - MAX} more problems`);
  });

  it('30,000 distinct keys in one mapping load (yaml\'s own duplicate check compared each key with all before it)', () => {
    let text = '';
    for (let i = 0; i < 30_000; i++) text += `k${i}: ${i}\n`;
    const result = parseYaml(text, 'wide.yaml');
    expect(result.diagnostics).toEqual([]);
    expect((result.document?.value as Record<string, number>).k29999).toBe(29999);
  });

  it('keys that become the same JSON key are duplicates: 1 and "1"', () => {
    expect(parseYaml('1: a\n"1": b\n', 'k.yaml').diagnostics[0]).toMatchObject({ code: 'YAML_DUPLICATE_KEY', line: 2, col: 1 });
  });

  it('unclosed brackets count towards the depth across the lines where the lexer gives up on them', () => {
    const text = `a: ${'['.repeat(40)}\nb: ${'['.repeat(40)}\n`;
    expect(parseYaml(text, 'deep.yaml').diagnostics[0]).toMatchObject({ code: 'YAML_LIMIT', line: 2 });
  });

  it('a parse that failed is never cached; one that succeeded is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolchain-yaml-cache-'));
    try {
      const cache = openDiskCache(dir)!;
      const bad = `name: x\nsteps: [\n# ${Math.random()}\n`;
      expect(parseYaml(bad, 'bad.yaml', undefined, cache).document).toBeUndefined();
      expect(cache.read('yaml', yamlCacheKey(bad))).toBeUndefined();
      const good = `name: x # ${Math.random()}\n`;
      expect(parseYaml(good, 'good.yaml', undefined, cache).diagnostics).toEqual([]);
      expect(cache.read('yaml', yamlCacheKey(good))).toBeDefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the second document where yaml itself does', () => {
    const samples = [
      'a: 1\n',
      '---\na: 1\n',
      '%YAML 1.2\n---\na: 1\n',
      '# c\n---\na: 1\n---\nb: 2\n',
      'a: 1\n...\nb: 2\n',
      'a: 1\n...\n# only a comment\n',
      '---\n---\n',
      'a: |\n  ---\n  text\nb: 2\n',
      '- x\n--- y\n',
      '\ufeffa: 1\n',
    ];
    for (const text of samples) {
      const docs = parseAllDocuments(text);
      const count = Array.isArray(docs) ? docs.length : 1;
      const scan = scanTokens(text, 64);
      expect(scan.secondDocument !== undefined, JSON.stringify(text)).toBe(count > 1);
      if (count > 1 && Array.isArray(docs)) expect(scan.secondDocument!.offset, JSON.stringify(text)).toBe(docs[1]!.range[0]);
    }
  });
});
