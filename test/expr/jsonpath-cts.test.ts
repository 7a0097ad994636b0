import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { compilePath, createEngine, ToolchainError, type Engine } from '../../src/index.js';
import { parseYaml } from '../../src/loader/index.js';

// The RFC 9535 JSONPath Compliance Test Suite (test/fixtures/jsonpath-cts/SOURCE.md), every case
// run as a chain author would: a one-step chain whose input `doc` is the case's document and whose
// step passes `input_map: { v: <selector> }` to a tool that returns its arguments. The selector's
// root `$` becomes `$.doc` (each `$` outside quotes), since `$` is the run context.
// - A valid selector must compile and give the RFC's nodes: a singular query (names and indexes)
//   gives the one value, or leaves `v` out when it selects nothing; any other gives the array.
// - An invalid selector must be refused when the chain is added, with BAD_JSONPATH at the value,
//   and the offset of the problem inside the selector.

interface Case {
  readonly name: string;
  readonly selector: string;
  readonly document?: unknown;
  readonly result?: unknown[];
  readonly results?: unknown[][];
  readonly invalid_selector?: boolean;
}

const CTS = JSON.parse(readFileSync(new URL('../fixtures/jsonpath-cts/cts.json', import.meta.url), 'utf8')) as { tests: Case[] };

/**
 * Cases a chain cannot express as the suite means them, each for a reason of the chain format:
 * a value that does not start with `$` is a literal string (the rule for chain values), so " $" (a
 * selector with a leading blank, which the RFC refuses) reaches no JSONPath parser at all.
 */
const NOT_A_PATH_IN_A_CHAIN = new Set(['basic, no leading whitespace']);

/** `$` → `$.doc` outside string literals; also returns where each insertion happened. */
function underDoc(selector: string): { text: string; inserts: number[] } {
  let text = '';
  const inserts: number[] = [];
  let quote: string | undefined;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i]!;
    text += c;
    if (quote !== undefined) {
      if (c === '\\') text += selector[++i] ?? '';
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '$') {
      inserts.push(i + 1);
      text += '.doc';
    }
  }
  return { text, inserts };
}

/** An offset in the rewritten selector, as an offset in the suite's own. */
function originalOffset(offset: number, inserts: readonly number[]): number {
  let shift = 0;
  for (const at of inserts) if (at + shift + 4 <= offset) shift += 4;
  return offset - shift;
}

function chainText(name: string, selector: string): string {
  const text = stringify({ name, inputs: { doc: {} }, steps: [{ name: 'pick', tool: 'echo', input_map: { v: selector } }] });
  // The YAML writer must carry every selector through unchanged (control characters, surrogates).
  const back = parseYaml(text, 'cts.yaml').document?.value as { steps: { input_map: { v: unknown } }[] };
  expect(back.steps[0]!.input_map.v).toBe(selector);
  return text;
}

describe('the JSONPath Compliance Test Suite, through chains', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ cache: 'off' });
    engine.registerTool({ name: 'echo', handler: async (args) => args });
  });
  afterAll(async () => engine.close());

  const cases = CTS.tests.map((c, i) => ({ ...c, i }));

  it('holds the 703 cases of the vendored suite', () => {
    expect(cases).toHaveLength(703);
    expect(cases.filter((c) => c.invalid_selector)).toHaveLength(247);
  });

  it.each(cases.filter((c) => !c.invalid_selector && !NOT_A_PATH_IN_A_CHAIN.has(c.name)))('$name: $selector', async (c) => {
    const { text } = underDoc(c.selector);
    engine.addChain(chainText(`cts_${c.i}`, text));
    const result = await engine.run(`cts_${c.i}`, { doc: c.document });
    expect(result.status, JSON.stringify(result.error)).toBe('succeeded');
    const outputs = result.outputs as Record<string, unknown>;
    const multi = compilePath(text).multi;
    const expected = c.results ?? [c.result!];
    const got = multi ? outputs.v : Object.hasOwn(outputs, 'v') ? [outputs.v] : [];
    if (!multi) for (const e of expected) expect(e.length).toBeLessThanOrEqual(1);
    expect(expected).toContainEqual(got);
  });

  it.each(cases.filter((c) => c.invalid_selector && !NOT_A_PATH_IN_A_CHAIN.has(c.name)))('refuses $name: $selector', (c) => {
    const { text, inserts } = underDoc(c.selector);
    let error: unknown;
    try {
      engine.addChain(chainText(`cts_${c.i}`, text));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ToolchainError);
    const diagnostics = (error as ToolchainError).diagnostics;
    expect(diagnostics.map((d) => [d.code, d.pointer])).toEqual([['BAD_JSONPATH', '/steps/0/input_map/v']]);
    const d = diagnostics[0]!;
    expect(d.line).toBeGreaterThan(0);
    expect(d.offset).toBeTypeOf('number');
    const offset = originalOffset(d.offset!, inserts);
    expect(offset).toBeGreaterThanOrEqual(0);
    expect(offset).toBeLessThanOrEqual(c.selector.length);
    expect(d.message).toContain(`at character ${d.offset! + 1}:`);
  });

  it('leaves exactly the cases named above to the chain format', async () => {
    const skipped = cases.filter((c) => NOT_A_PATH_IN_A_CHAIN.has(c.name));
    expect(skipped.map((c) => c.selector)).toEqual([' $']);
    // The engine reads it as the literal string it is: the tool receives " $".
    engine.addChain(chainText('cts_literal', ' $'));
    expect((await engine.run('cts_literal', { doc: {} })).outputs).toEqual({ v: ' $' });
  });
});
