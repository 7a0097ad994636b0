import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readManifest } from '../../src/plugins/index.js';
import { removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await removeDir(root);
});

async function read(yaml: string) {
  await writeFiles(root, { 'p/plugin.yaml': yaml });
  return readManifest(`${root}/p`);
}

describe('plugin manifests', () => {
  it('reads every key of a plugin manifest', async () => {
    const result = await read(`# yaml-language-server: $schema=../../schemas/plugin.schema.json
name: geo
version: 1.2.0
author: someone
description: Offline city look-up and clocks.
capabilities: [geocoding]
requires:
  - text >= 1.0.0
  - clock ^1.2
  - base
env: [GEO_API_KEY]
tools:
  - name: find_city
    description: Find the first city named in a text.
    handler: tools/find_city.ts
    parameters:
      type: object
      properties: { text: { type: string, description: The text to search } }
      required: [text]
    returns: { type: object }
    timeout: 2s
    dangerous: false
    truncate: true
    cache: { ttl: 10m }
    circuit_breaker: { failures: 3, reset_after: 30s, stale_on_open: true }
`);
    expect(result.diagnostics).toEqual([]);
    expect(result.manifest).toMatchObject({ name: 'geo', version: '1.2.0', capabilities: ['geocoding'], env: ['GEO_API_KEY'] });
    expect(result.requirements.map((r) => [r.name, r.range])).toEqual([
      ['text', '>= 1.0.0'],
      ['clock', '^1.2'],
      ['base', '*'],
    ]);
  });

  it('rejects unknown keys with did-you-mean at the key’s line and column', async () => {
    const result = await read('name: geo\nversion: 1.0.0\ntools:\n  - name: t\n    paramters: {}\ndescripton: x\n');
    const byCode = result.diagnostics.filter((d) => d.code === 'UNKNOWN_KEY');
    expect(byCode).toHaveLength(2);
    expect(byCode).toContainEqual(expect.objectContaining({ pointer: '/tools/0/paramters', line: 5, col: 5, suggestion: 'parameters' }));
    expect(byCode).toContainEqual(expect.objectContaining({ pointer: '/descripton', line: 6, col: 1, suggestion: 'description' }));
    expect(byCode[0]!.file).toBe(`${root}/p/plugin.yaml`);
    expect(result.manifest).toBeUndefined();
  });

  it('reports a version that is not semver as BAD_SEMVER, and bad ranges too', async () => {
    const bad = await read('name: geo\nversion: 1.2\n');
    expect(bad.diagnostics).toEqual([expect.objectContaining({ code: 'BAD_SEMVER', line: 2, col: 10 })]);
    const range = await read('name: geo\nversion: 1.2.0\nrequires: ["text >== one"]\n');
    expect(range.diagnostics).toEqual([expect.objectContaining({ code: 'BAD_SEMVER', pointer: '/requires/0', line: 3 })]);
  });

  it('reports other schema problems as PLUGIN_INVALID (or BAD_DURATION), all at once', async () => {
    const result = await read('name: "bad name"\nversion: 1.0.0\ntools:\n  - name: t\n    timeout: soon\n    cache: {}\n    dangerous: maybe\n');
    const codes = result.diagnostics.map((d) => `${d.code} ${d.pointer}`).sort();
    expect(codes).toEqual(['BAD_DURATION /tools/0/timeout', 'PLUGIN_INVALID /name', 'PLUGIN_INVALID /tools/0/cache', 'PLUGIN_INVALID /tools/0/dangerous']);
  });

  it('reports a tool defined twice', async () => {
    const result = await read('name: geo\nversion: 1.0.0\ntools:\n  - name: t\n  - name: t\n');
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: 'DUPLICATE_NAME', pointer: '/tools/1/name', line: 5 })]);
  });

  it('uses the safe YAML loader: syntax errors, duplicate keys and __proto__ keys', async () => {
    expect((await read('name: [geo\n')).diagnostics[0]!.code).toBe('YAML_SYNTAX');
    expect((await read('name: a\nname: b\nversion: 1.0.0\n')).diagnostics.map((d) => d.code)).toContain('YAML_DUPLICATE_KEY');
    expect((await read('name: a\nversion: 1.0.0\n__proto__: { x: 1 }\n')).diagnostics.map((d) => d.code)).toContain('FORBIDDEN_KEY');
    expect((await readManifest(`${root}/missing`)).diagnostics[0]!.code).toBe('FILE_UNREADABLE');
  });

  it('keeps src/plugins/manifest.generated.ts in step with the schema', async () => {
    // @ts-expect-error -- a plain JavaScript build script without type declarations
    const { generate } = (await import('../../scripts/gen-types.js')) as { generate: (t: object) => Promise<string> };
    const expected = await generate({ schema: 'schemas/plugin.schema.json', out: 'src/plugins/manifest.generated.ts', name: 'PluginManifest' });
    expect(await readFile('src/plugins/manifest.generated.ts', 'utf8')).toBe(expected);
  });
});

describe('manifest messages a new user meets', () => {
  it('a misspelt JSON Schema type gets the closest type; a mapping where a list belongs says both', async () => {
    const result = await read('name: a\nversion: 1.0.0\nrequires: { geo: 1 }\ntools:\n  - name: t\n    parameters:\n      type: object\n      properties:\n        q: { type: strin }\n');
    expect(result.diagnostics.map((d) => [d.line, d.col, d.message])).toEqual([
      [3, 11, "'requires' must be a list, not an object"],
      [7, 7, "'tools.0.parameters' is not a valid JSON Schema: 'properties.q.type' is 'strin', which is not a JSON Schema type (did you mean 'string'?); the types are string, number, integer, boolean, object, array, null"],
    ]);
  });

  it('a requirement keeps where it is written, so PLUGIN_REQUIREMENT points at it', async () => {
    const result = await read('name: a\nversion: 1.0.0\nrequires:\n  - text >= 1.0.0\n  - geo ^9.0.0\n');
    expect(result.requirements.map((r) => [r.source, r.line, r.col])).toEqual([
      ['text >= 1.0.0', 4, 5],
      ['geo ^9.0.0', 5, 5],
    ]);
  });
});
