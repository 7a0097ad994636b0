import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/index.js';
import {
  dropNullOptionals,
  exportNames,
  isValidFunctionName,
  toAnthropicTools,
  toMcpTools,
  toOpenAITools,
  toStrictSchema,
} from '../../src/llm/index.js';
import { ToolchainError } from '../../src/common/errors.js';
import { llmEngine, lookupParams } from '../fixtures/llm/engine.js';

describe('exporters', () => {
  it('export every tool and every chain, with valid names, descriptions kept, chains with their inputs as parameters', async () => {
    const { engine } = await llmEngine();
    const tools = toOpenAITools(engine);
    expect(tools.map((t) => t.function.name)).toEqual(['sum', 'free_form', 'alpha__lookup', 'beta__lookup', 'wipe', 'chain__sum', 'brief']);
    for (const t of tools) {
      expect(t.type).toBe('function');
      expect(isValidFunctionName(t.function.name)).toBe(true);
      expect(t.function.parameters.type).toBe('object');
      expect(t.function).not.toHaveProperty('strict');
    }
    const byName = Object.fromEntries(tools.map((t) => [t.function.name, t.function]));
    expect(byName.alpha__lookup!.description).toBe('Look a key up in alpha.');
    expect(byName.alpha__lookup!.parameters).toEqual(lookupParams);
    expect(byName.free_form!.description).toBe("Calls the tool 'free_form'.");
    expect(byName.brief).toEqual({
      name: 'brief',
      description: 'Look a key up in alpha and report it.',
      parameters: {
        type: 'object',
        properties: { key: { type: 'string', description: 'The key.' }, loud: { type: 'boolean', default: false } },
        required: ['key'],
        additionalProperties: false,
      },
    });
  });

  it('Anthropic and MCP use the same names and schemas; MCP titles show the qualified name and flag dangerous tools', async () => {
    const { engine } = await llmEngine();
    const openai = toOpenAITools(engine);
    const anthropic = toAnthropicTools(engine);
    const mcp = toMcpTools(engine);
    expect(anthropic.map((t) => t.name)).toEqual(openai.map((t) => t.function.name));
    expect(mcp.map((t) => t.name)).toEqual(openai.map((t) => t.function.name));
    expect(anthropic[2]).toEqual({ name: 'alpha__lookup', description: 'Look a key up in alpha.', input_schema: lookupParams });
    expect(mcp.find((t) => t.name === 'wipe')).toMatchObject({ title: 'beta/wipe', annotations: { destructiveHint: true } });
    expect(mcp.find((t) => t.name === 'brief')).toMatchObject({ title: 'chain brief', inputSchema: { type: 'object', required: ['key'] } });
    expect(mcp.find((t) => t.name === 'sum')).not.toHaveProperty('annotations');
  });

  it('chains-only, tools-only and include select without renaming', async () => {
    const { engine } = await llmEngine();
    expect(toOpenAITools(engine, { tools: false }).map((t) => t.function.name)).toEqual(['chain__sum', 'brief']);
    expect(toAnthropicTools(engine, { chains: false }).map((t) => t.name)).toEqual(['sum', 'free_form', 'alpha__lookup', 'beta__lookup', 'wipe']);
    expect(toMcpTools(engine, { include: ['brief', 'beta/lookup', 'alpha__lookup'] }).map((t) => t.name)).toEqual(['brief', 'beta__lookup', 'alpha__lookup']);
    expect(() => toOpenAITools(engine, { include: ['lookpu'] })).toThrow(ToolchainError);
    expect(() => toOpenAITools(engine, { include: ['brieff'] })).toThrow(/closest: brief/);
  });

  it('the exported schemas are copies: editing them leaves the registry alone', async () => {
    const { engine } = await llmEngine();
    const [first] = toOpenAITools(engine, { include: ['alpha__lookup'], strict: true });
    (first!.function.parameters as { properties: Record<string, unknown> }).properties.key = 'changed';
    expect(engine.tools().get('alpha/lookup')!.parameters).toEqual(lookupParams);
  });

  it('accepts the parts of an engine instead of an engine', async () => {
    const { engine } = await llmEngine();
    const names = toOpenAITools({ tools: engine.tools(), chains: engine.chains() }).map((t) => t.function.name);
    expect(names).toEqual(toOpenAITools(engine).map((t) => t.function.name));
    expect(toAnthropicTools({ tools: engine.tools().tools().slice(0, 1) }).map((t) => t.name)).toEqual(['sum']);
  });
});

describe('exported names', () => {
  it('round-trip: every exported name resolves to what it was made from; qualified and unambiguous bare names resolve too', async () => {
    const { engine } = await llmEngine();
    const names = exportNames(engine);
    for (const c of names.callables) expect(names.resolve(c.exportedName)).toBe(c);
    const target = (name: string) => {
      const c = names.resolve(name);
      return c && `${c.kind}:${c.target}`;
    };
    expect(target('alpha__lookup')).toBe('tool:alpha/lookup');
    expect(target('beta__lookup')).toBe('tool:beta/lookup');
    expect(target('alpha/lookup')).toBe('tool:alpha/lookup');
    expect(target('lookup')).toBeUndefined(); // two plugins have it: ambiguous
    expect(target('wipe')).toBe('tool:beta/wipe');
    expect(target('beta/wipe')).toBe('tool:beta/wipe');
    expect(target('sum')).toBe('tool:sum'); // code has the last word
    expect(target('chain__sum')).toBe('chain:sum');
    expect(target('brief')).toBe('chain:brief');
  });

  it('shortens names over 64 characters with a hash, keeping them distinct and reversible', () => {
    const registry = createRegistry();
    const longPlugin = `plugin_${'p'.repeat(50)}`;
    const longTool = `tool_${'t'.repeat(50)}`;
    const def = (name: string) => ({ name, handler: () => null });
    registry.setPluginTools(longPlugin, '1.0.0', [def(longTool)]);
    registry.setPluginTools(`${longPlugin}_2`, '1.0.0', [def(longTool)]);
    registry.setPluginTools('short', '1.0.0', [def(`${'x'.repeat(70)}`)]);
    const names = exportNames({ tools: registry.current() });
    const exported = names.callables.map((c) => c.exportedName);
    expect(new Set(exported).size).toBe(3);
    for (const name of exported) {
      expect(isValidFunctionName(name)).toBe(true);
      expect(names.resolve(name)!.exportedName).toBe(name);
    }
    expect(names.resolve(exported[0]!)!.target).toBe(`${longPlugin}/${longTool}`);
    expect(names.resolve(exported[1]!)!.target).toBe(`${longPlugin}_2/${longTool}`);
  });
});

describe('OpenAI strict mode', () => {
  it('makes optional properties required and nullable, closes objects, and notes what strict mode cannot say', () => {
    const converted = toStrictSchema(lookupParams);
    expect(converted.strict).toBe(true);
    expect(converted.schema).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['key', 'limit', 'mode'],
      properties: {
        key: { type: 'string', description: 'What to look up. (minLength: 1)' },
        limit: { type: ['integer', 'null'], minimum: 1, description: 'At most this many results. (optional: null leaves it out; default: 10)' },
        mode: { type: ['string', 'null'], enum: ['exact', 'fuzzy', null], description: '(optional: null leaves it out)' },
      },
    });
  });

  it('converts nested objects, arrays, $defs and oneOf, and closes objects that did not say', () => {
    const schema = {
      type: 'object',
      properties: {
        point: { type: 'object', properties: { lat: { type: 'number' }, lng: { type: 'number' } }, required: ['lat'] },
        tags: { type: 'array', items: { type: 'string', format: 'slug' }, uniqueItems: true },
        shape: { oneOf: [{ $ref: '#/$defs/circle' }, { type: 'string', const: 'none' }] },
        when: { type: 'string', format: 'date-time' },
      },
      required: ['point', 'tags', 'shape'],
      $defs: { circle: { type: 'object', properties: { r: { type: 'number' } }, required: ['r'], additionalProperties: false } },
    };
    const { schema: out, strict } = toStrictSchema(schema);
    expect(strict).toBe(true);
    expect(out).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['point', 'tags', 'shape', 'when'],
      properties: {
        point: {
          type: 'object',
          additionalProperties: false,
          required: ['lat', 'lng'],
          properties: { lat: { type: 'number' }, lng: { type: ['number', 'null'], description: '(optional: null leaves it out)' } },
        },
        tags: { type: 'array', items: { type: 'string', description: '(format: slug)' }, description: '(uniqueItems: true)' },
        shape: { anyOf: [{ $ref: '#/$defs/circle' }, { type: 'string', const: 'none' }] },
        when: { type: ['string', 'null'], format: 'date-time', description: '(optional: null leaves it out)' },
      },
      $defs: { circle: { type: 'object', properties: { r: { type: 'number' } }, required: ['r'], additionalProperties: false } },
    });
  });

  it('leaves schemas it cannot convert faithfully as they are, with strict false and the reason', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ type: 'object' }, /without properties/],
      [{ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true }, /additional properties/],
      [{ type: 'object', properties: { meta: { type: 'object', additionalProperties: { type: 'string' } } } }, /properties\/meta/],
      [{ type: 'object', properties: { a: {} } }, /without a type/],
      [{ type: 'object', properties: { a: { type: ['string', 'null'] } } }, /optional property that also accepts null/],
      [{ type: 'object', properties: { a: { allOf: [{ type: 'string' }] } }, required: ['a'] }, /allOf/],
      [{ type: 'object', properties: { a: { type: 'array', items: [{ type: 'string' }] } }, required: ['a'] }, /items schema/],
      [{ anyOf: [{ type: 'object' }] }, /root/],
      [{ type: 'object', properties: { a: { type: 'string', 'x-secret': 1 } }, required: ['a'] }, /x-secret/],
    ];
    for (const [schema, reason] of cases) {
      const result = toStrictSchema(schema);
      expect(result.strict, JSON.stringify(schema)).toBe(false);
      expect(result.schema).toBe(schema);
      expect(result.reason).toMatch(reason);
    }
  });

  it('toOpenAITools({ strict: true }) marks each function with whether its schema was converted', async () => {
    const { engine } = await llmEngine();
    const strictness = Object.fromEntries(toOpenAITools(engine, { strict: true }).map((t) => [t.function.name, t.function.strict]));
    expect(strictness).toEqual({ sum: true, free_form: false, alpha__lookup: true, beta__lookup: true, wipe: true, chain__sum: true, brief: true });
    const free = toOpenAITools(engine, { strict: true, include: ['free_form'] })[0]!;
    expect(free.function.parameters).toEqual({ type: 'object', properties: {} });
  });

  it('dropNullOptionals undoes the nullable optionals, and nothing else', () => {
    const schema = {
      type: 'object',
      required: ['key', 'nullable_required'],
      properties: {
        key: { type: 'string' },
        nullable_required: { type: ['string', 'null'] },
        limit: { type: 'integer' },
        maybe: { type: ['string', 'null'] },
        point: { type: 'object', properties: { lat: { type: 'number' }, lng: { type: 'number' } }, required: ['lat'] },
        list: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } } } },
      },
    };
    const args = { key: 'k', nullable_required: null, limit: null, maybe: null, point: { lat: 1, lng: null }, list: [{ x: null }, { x: 2 }], unknown: null };
    const frozen = structuredClone(args);
    expect(dropNullOptionals(args, schema)).toEqual({ key: 'k', nullable_required: null, maybe: null, point: { lat: 1 }, list: [{}, { x: 2 }], unknown: null });
    expect(args).toEqual(frozen);
    const untouched = { key: 'k', nullable_required: 'x' };
    expect(dropNullOptionals(untouched, schema)).toBe(untouched);
  });
});

describe('MCP output schemas', () => {
  it('describe structuredContent as it is sent: objects as they are, other values as { result }, a truncating tool also its marker; nothing for an untyped result', () => {
    const registry = createRegistry();
    const handler = (): unknown => 1;
    registry.register({ name: 'obj', parameters: { type: 'object' }, returns: { type: 'object', properties: { a: { type: 'integer' } } }, handler });
    registry.register({ name: 'num', parameters: { type: 'object' }, returns: { type: 'number' }, handler });
    registry.register({ name: 'big', parameters: { type: 'object' }, returns: { type: 'string' }, truncate: true, handler });
    registry.register({ name: 'either', parameters: { type: 'object' }, returns: { anyOf: [{ type: 'string' }, { type: 'object' }] }, handler });
    registry.register({ name: 'plain', parameters: { type: 'object' }, handler });
    const out = Object.fromEntries(toMcpTools({ tools: registry.current() }).map((t) => [t.name, t.outputSchema]));
    expect(out.obj).toEqual({ type: 'object', properties: { a: { type: 'integer' } } });
    expect(out.num).toEqual({ type: 'object', properties: { result: { type: 'number' } }, required: ['result'] });
    expect(out.big).toMatchObject({ type: 'object', anyOf: [{ properties: { result: { type: 'string' } } }, { required: ['truncated', 'original_bytes', 'value'] }] });
    expect(out.either).toBeUndefined();
    expect(out.plain).toBeUndefined();
  });
});
