import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Diagnostic } from '../../src/index.js';
import { compileChain } from '../../src/index.js';
import { parseYaml } from '../../src/loader/index.js';
import { loadPlugin } from '../../src/plugins/index.js';

// The JSON Schema and the engine agree: the schemas, checked with a fresh Ajv as an
// editor's language server checks them, and `validate`'s own path through the engine, must agree:
//   - where the schema rejects, the engine rejects with a diagnostic that has a line and a
//     column (never a crash, and only for that file);
//   - where the engine rejects for a reason the schema can state (a type, an unknown key, a
//     duration, a semver range, `parameters` that are not a JSON Schema), the schema rejects too.
// Checked on every fixture and on thousands of generated mutations of the shipped files.

const REPO = join(import.meta.dirname, '..', '..');

/** Codes for problems of a file's shape, which the JSON Schema can state. */
const SHAPE_CODES = new Set(['UNKNOWN_KEY', 'MISSING_KEY', 'BAD_TYPE', 'BAD_VALUE', 'BAD_NAME', 'BAD_DURATION', 'SCHEMA_INVALID', 'BAD_SEMVER', 'PLUGIN_INVALID']);

let chainSchema: ValidateFunction;
let pluginSchema: ValidateFunction;
let work: string;

beforeAll(async () => {
  // As an editor does: the schema files themselves, compiled at run time; unknown annotation
  // keywords (tsType, patternErrorMessage) are ignored, not errors.
  const ajv = new Ajv({ allErrors: true, strict: false });
  chainSchema = ajv.compile(JSON.parse(await readFile(join(REPO, 'schemas', 'chain.schema.json'), 'utf8')));
  pluginSchema = ajv.compile(JSON.parse(await readFile(join(REPO, 'schemas', 'plugin.schema.json'), 'utf8')));
  work = await mkdtemp(join(tmpdir(), 'toolchain-agree-'));
});
afterAll(() => rm(work, { recursive: true, force: true }));

interface Verdict {
  readonly schemaRejects: boolean;
  readonly errors: readonly Diagnostic[];
}

function checkChain(text: string, file: string): Verdict {
  const parsed = parseYaml(text, file);
  const value = parsed.document?.value;
  const schemaRejects = parsed.document === undefined || !chainSchema(value);
  const errors = compileChain(text, { file }).diagnostics.filter((d) => d.severity === 'error');
  return { schemaRejects, errors };
}

async function checkManifest(dir: string, text: string): Promise<Verdict> {
  await writeFile(join(dir, 'plugin.yaml'), text);
  const parsed = parseYaml(text, 'plugin.yaml');
  const schemaRejects = parsed.document === undefined || !pluginSchema(parsed.document.value);
  const load = await loadPlugin(dir, { mode: 'static' });
  const errors = load.ok ? load.plugin.warnings.filter((d) => d.severity === 'error') : load.diagnostics.filter((d) => d.severity === 'error');
  return { schemaRejects, errors };
}

/** The disagreements of one verdict, as readable lines (empty: they agree). */
function disagreements(what: string, v: Verdict): string[] {
  const out: string[] = [];
  if (v.schemaRejects && v.errors.length === 0) out.push(`${what}: the schema rejects it, the engine accepts it`);
  for (const d of v.errors) if (d.line === undefined || d.col === undefined) out.push(`${what}: ${d.code} without a position`);
  const shape = v.errors.filter((d) => SHAPE_CODES.has(d.code));
  if (!v.schemaRejects && shape.length > 0) out.push(`${what}: the engine rejects it (${shape.map((d) => `${d.code} ${d.message}`).join('; ')}), the schema accepts it`);
  return out;
}

// ----------------------------------------------------------------------------------------------
// Mutations: every node of a document replaced by a value of each other type, every member
// removed, every object given an unknown key.

const REPLACEMENTS: readonly unknown[] = ['x', '1 s', 1, -1, 0.5, true, null, [1], ['x'], { a: 1 }];

type Path = readonly (string | number)[];

function nodes(value: unknown, path: Path = []): Path[] {
  const out: Path[] = [path];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...nodes(v, [...path, i])));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...nodes(v, [...path, k]));
  return out;
}

function edit(value: unknown, path: Path, change: (parent: Record<string, unknown> | unknown[], key: string | number) => void): unknown {
  const copy = structuredClone(value);
  let parent: unknown = copy;
  for (const k of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[k];
  change(parent as Record<string, unknown>, path[path.length - 1]!);
  return copy;
}

function* mutations(value: unknown): Generator<{ name: string; value: unknown }> {
  for (const path of nodes(value)) {
    const at = `/${path.join('/')}`;
    if (path.length > 0) {
      for (const r of REPLACEMENTS) yield { name: `${at} = ${JSON.stringify(r)}`, value: edit(value, path, (p, k) => ((p as Record<string | number, unknown>)[k] = structuredClone(r))) };
      yield {
        name: `${at} removed`,
        value: edit(value, path, (p, k) => (Array.isArray(p) ? p.splice(Number(k), 1) : delete (p as Record<string, unknown>)[k as string])),
      };
    }
    let target: unknown = value;
    for (const k of path) target = (target as Record<string | number, unknown>)[k];
    if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
      yield { name: `${at} + unknown key`, value: path.length === 0 ? { ...(value as object), zz_unknown: 1 } : edit(value, path, (p, k) => ((p as Record<string | number, Record<string, unknown>>)[k]!.zz_unknown = 1)) };
    }
  }
}

async function yamlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await yamlFiles(path)));
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out;
}

describe('the JSON Schemas and the engine agree', () => {
  it('on every chain and manifest under test/fixtures/ and the shipped folders', async () => {
    const files = [...(await yamlFiles(join(REPO, 'test', 'fixtures'))), ...(await yamlFiles(join(REPO, 'chains'))), ...(await yamlFiles(join(REPO, 'plugins')))];
    const problems: string[] = [];
    let checked = 0;
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      const name = relative(REPO, file);
      if (basename(file) === 'plugin.yaml') {
        const dir = join(work, `fixture-${checked}`);
        await cp(join(file, '..'), dir, { recursive: true });
        problems.push(...disagreements(name, await checkManifest(dir, text)));
      } else if (/^\s*steps:|\nsteps:/m.test(text) || file.includes('/bad/')) {
        problems.push(...disagreements(name, checkChain(text, file)));
      } else continue;
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
    expect(problems).toEqual([]);
  });

  it('on every mutation of the shipped chains', async () => {
    const problems: string[] = [];
    let count = 0;
    for (const name of await readdir(join(REPO, 'chains'))) {
      const value = parseYaml(await readFile(join(REPO, 'chains', name), 'utf8'), name).document!.value;
      for (const m of mutations(value)) {
        count++;
        let verdict: Verdict;
        try {
          verdict = checkChain(stringify(m.value), `${name}`);
        } catch (error) {
          problems.push(`${name} ${m.name}: the engine threw ${(error as Error).message}`);
          continue;
        }
        problems.push(...disagreements(`${name} ${m.name}`, verdict));
      }
    }
    expect(count).toBeGreaterThan(1000);
    expect(problems).toEqual([]);
    // Thousands of full compiles (a few ms each, mostly YAML parsing) on a shared 2-core machine.
  }, 120_000);

  it('on a sample of the mutations of the shipped manifests', async () => {
    const problems: string[] = [];
    let count = 0;
    for (const plugin of await readdir(join(REPO, 'plugins'))) {
      const dir = join(work, `shipped-${plugin}`);
      await cp(join(REPO, 'plugins', plugin), dir, { recursive: true });
      const value = parseYaml(await readFile(join(dir, 'plugin.yaml'), 'utf8'), 'plugin.yaml').document!.value;
      let k = 0;
      for (const m of mutations(value)) {
        // Every fifth one keeps the run short (a load reads the folder); every kind still occurs.
        if (k++ % 5 !== 0) continue;
        count++;
        try {
          problems.push(...disagreements(`${plugin}/plugin.yaml ${m.name}`, await checkManifest(dir, stringify(m.value))));
        } catch (error) {
          problems.push(`${plugin}/plugin.yaml ${m.name}: the engine threw ${(error as Error).message}`);
        }
      }
    }
    expect(count).toBeGreaterThan(300);
    expect(problems).toEqual([]);
  }, 120_000);
});
