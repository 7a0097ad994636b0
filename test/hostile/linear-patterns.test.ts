
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileChain, createEngine } from '../../src/index.js';
import { createSchemaCompiler } from '../../src/registry/index.js';
import { openDiskCache } from '../../src/cache/index.js';
import { removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';
import { runCli } from '../helpers/run-cli.js';

// Hostile input, round two: a JSON Schema `pattern` is someone else's regular expression, matched
// against someone else's text. `^(a+)+$` against forty `a`s and a `!` backtracks for longer than
// anyone waits with JavaScript's RegExp, in the engine, whatever the tool's isolation. Patterns run
// on a linear-time engine; what it cannot run is refused when the file loads.

const EVIL = '^(a+)+$';
const ATTACK = `${'a'.repeat(40)}!`;

describe('schema patterns run in linear time', () => {
  let project: string;
  beforeAll(async () => {
    project = await tempDir('toolchain-linear-');
    await writeFiles(project, {
      'chains/evil_input.yaml': `name: evil_input\ninputs:\n  s: { type: string, pattern: "${EVIL}" }\nsteps:\n  - name: e\n    tool: echo_args\n    input_map: { s: $.s }\noutputs: { s: $.e.s }\n`,
      'chains/evil_param.yaml': 'name: evil_param\ninputs: { s: string }\nsteps:\n  - name: e\n    tool: echo_args\n    timeout: 2s\n    input_map: { s: $.s }\noutputs: { s: $.e.s }\n',
      'plugins/p/plugin.yaml': `name: p\nversion: 1.0.0\ntools:\n  - name: echo_args\n    handler: tools/echo.js\n    parameters:\n      type: object\n      properties:\n        s: { type: string, pattern: "${EVIL}" }\n      patternProperties:\n        "^(x+)+y$": { type: string }\n`,
      'plugins/p/tools/echo.js': 'export default (args) => args;\n',
    });
  });
  afterAll(() => removeDir(project));

  // A child process, so that today's behaviour (a CLI stuck at full CPU) is a failed test, not a stuck suite.
  it('a chain input pattern: the CLI answers INPUT_INVALID at once', async () => {
    const out = await runCli(['run', 'evil_input', '--input-json', JSON.stringify({ s: ATTACK })], { cwd: project });
    expect(out.stderr).toContain('INPUT_INVALID');
    expect(out.code).toBe(2);
    const ok = await runCli(['run', 'evil_input', '--input-json', JSON.stringify({ s: 'aaaa' })], { cwd: project });
    expect(JSON.parse(ok.stdout)).toEqual({ s: 'aaaa' });
  });

  it("a plugin parameter's pattern, with --isolation worker: VALIDATION_FAILED at once", async () => {
    const out = await runCli(['run', 'evil_param', '--isolation', 'worker', '--input-json', JSON.stringify({ s: ATTACK })], { cwd: project });
    expect(out.stderr).toContain('VALIDATION_FAILED');
    expect(out.code).toBe(1);
  });

  it('the same in the library, and from validators read back from the disk cache', async () => {
    const cacheDir = await tempDir('toolchain-linear-cache-');
    try {
      for (const from of ['ajv', 'cache']) {
        const seen: string[] = [];
        const schemas = createSchemaCompiler({ cache: openDiskCache(cacheDir)!, onCompile: (e) => seen.push(e.from) });
        const { validate } = schemas.compile({ type: 'object', properties: { s: { type: 'string', pattern: EVIL } }, patternProperties: { '^(x+)+y$': { type: 'string' } } }, 'results');
        expect(seen).toEqual([from]);
        expect(validate({ s: ATTACK })).toBe(false);
        expect(validate({ [`${'x'.repeat(40)}!`]: 1 })).toBe(true);
        expect(validate({ xxy: 1 })).toBe(false);
        expect(validate({ s: 'aaa' })).toBe(true);
      }
    } finally {
      await removeDir(cacheDir);
    }
  });

  it('reads what JavaScript writes differently: \\u escapes, surrogate pairs, \\cJ, [\\b], named groups', async () => {
    const schemas = createSchemaCompiler();
    const check = (pattern: string, text: string): boolean => schemas.compile({ type: 'string', pattern }, 'results').validate(text) as boolean;
    expect(check('^\\u0041\\u{42}$', 'AB')).toBe(true);
    expect(check('^\\uD83D\\uDE00$', '😀')).toBe(true);
    expect(check('^[\\u0061-\\u0063]+$', 'abc')).toBe(true);
    expect(check('^[\\u0061-\\u0063]+$', 'abd')).toBe(false);
    expect(check('^a\\cJb$', 'a\nb')).toBe(true);
    expect(check('^[\\b]$', '\b')).toBe(true);
    expect(check('^(?<year>\\d{4})-\\d{2}$', '2025-01')).toBe(true);
    expect(check('\\p{Lu}', 'É')).toBe(true);
  });
});

describe('a pattern with no linear-time match is refused at load', () => {
  it('in a chain input: UNSUPPORTED_PATTERN at the pattern, with the reason', () => {
    const text = 'name: c\ninputs:\n  s:\n    type: string\n    pattern: "^(?=a)a+$"\n  o:\n    type: object\n    default: {}\n    patternProperties:\n      "(a)\\\\1": { type: string }\nsteps: []\n';
    const { diagnostics } = compileChain(text, { file: 'c.yaml' });
    const found = diagnostics.filter((d) => d.code === 'UNSUPPORTED_PATTERN');
    expect(found.map((d) => [d.pointer, d.line])).toEqual([
      ['/inputs/s/pattern', 5],
      ['/inputs/o/patternProperties/(a)\\1', 10],
    ]);
    expect(found[0]!.message).toContain('lookahead');
    expect(found[1]!.message).toContain('backreference');
  });

  it("in a tool's parameters: the plugin is invalid, naming the pattern and the reason", async () => {
    const dir = await tempDir('toolchain-linear-plugin-');
    try {
      await writeFiles(dir, {
        'plugins/q/plugin.yaml': 'name: q\nversion: 1.0.0\ntools:\n  - name: t\n    handler: tools/t.js\n    parameters:\n      type: object\n      properties:\n        s: { type: string, pattern: "^(?<!x)y$" }\n',
        'plugins/q/tools/t.js': 'export default () => ({});\n',
      });
      const out = await runCli(['validate'], { cwd: dir });
      expect(out.code).toBe(2);
      expect(out.stdout).toMatch(/^plugins\/q\/plugin\.yaml:7:7 PLUGIN_INVALID .*properties\/s\/pattern "\^\(\?<!x\)y\$".*lookbehind/m);
    } finally {
      await removeDir(dir);
    }
  });

  it('registerTool with such a pattern throws PLUGIN_INVALID', async () => {
    const engine = await createEngine({ cache: 'off' });
    try {
      expect(() => engine.registerTool({ name: 'x', parameters: { type: 'object', properties: { s: { type: 'string', pattern: '(a)\\1' } } }, handler: () => ({}) })).toThrow(/backreference/);
    } finally {
      await engine.close();
    }
  });
});



describe('an OpenAPI document with such a pattern', () => {
  it('keeps the operation: the pattern becomes a note in the description, as other unusable patterns do', async () => {
    const dir = await tempDir('toolchain-linear-openapi-');
    try {
      const spec = {
        openapi: '3.0.3',
        info: { title: 't', version: '1' },
        servers: [{ url: 'https://api.example.com' }],
        paths: {
          '/items': {
            get: {
              operationId: 'listItems',
              parameters: [
                { name: 'code', in: 'query', required: true, schema: { type: 'string', pattern: '^(?=[A-Z])[A-Z0-9]+$' } },
                { name: 'evil', in: 'query', schema: { type: 'string', pattern: EVIL } },
              ],
              responses: { '200': { description: 'ok' } },
            },
          },
        },
      };
      await writeFiles(dir, { 'spec.json': JSON.stringify(spec), 'plugins/api/plugin.yaml': `name: api\nversion: 1.0.0\nsource:\n  openapi:\n    spec: ${JSON.stringify(`${dir}/spec.json`)}\n` });
      const engine = await createEngine({ pluginsDir: `${dir}/plugins`, cache: 'off' });
      try {
        const tool = engine.tools().get('api/listItems');
        expect(tool).toBeDefined();
        const props = tool!.parameters.properties as Record<string, { pattern?: string; description?: string }>;
        expect(props.code!.pattern).toBeUndefined();
        expect(props.code!.description).toContain('(?=[A-Z])');
        expect(props.evil!.pattern).toBe(EVIL);
        expect(tool!.prepare({ code: 'x', evil: ATTACK }).ok).toBe(false);
      } finally {
        await engine.close();
      }
    } finally {
      await removeDir(dir);
    }
  });
});
