import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileChain, parseDuration } from '../../src/index.js';
import { validateChainFile, validatePluginManifest } from '../../src/schemas/validators.js';
import { checkManifestSchema } from '../../src/plugins/check-manifest-schema.js';
import { parseYaml } from '../../src/loader/index.js';

// `timeout: "1 s"`, `597h` and `3000000` passed validation and then meant "no
// timeout"; the schema allowed "2 s" and refused ".5s" while parseDuration did the opposite; `0s`
// compiled to 0 ms while `0` was refused. One grammar is now generated into the schemas and the
// engine, and these properties check that they accept exactly the same values.

const TIMER_LIMIT_MS = 2 ** 31 - 1;

const chainWith = (timeout: unknown): unknown => ({ name: 'c', steps: [{ name: 's', tool: 't', timeout }] });
const manifestWith = (timeout: unknown): unknown => ({ name: 'p', version: '1.0.0', tools: [{ name: 't', timeout }] });

/** Strings near the grammar: digits, dots, units, spaces, signs, exponents and the bounds. */
const durationLike = fc.oneof(
  fc.stringMatching(/^[-+ ]?[0-9]{0,11}(\.[0-9]{0,4})?(e[0-9])? ?(ms|s|m|h|d|us|)[ ]?$/),
  fc.constantFrom('576h', '576.0h', '576.00001h', '575.99999h', '34560m', '34560.1m', '2073600s', '2073600.001s', '2073600000ms', '2073600001ms', '597h', '0s', '0.0s', '.5s', '0.5s', '00.5s', '1 s', ' 1s', '1s ', '1.s', '.s', ''),
);
const numberLike = fc.oneof(
  fc.double({ noNaN: false }),
  fc.integer({ min: -10, max: 3_000_000 }),
  fc.constantFrom(0, -0, 2073600, 2073600.0000001, 3_000_000, Number.MIN_VALUE, 1e-9, Infinity),
);

describe('durations: the schemas and the engine agree', () => {
  it('every string: the chain schema accepts it exactly when parseDuration gives a finite number within the timer limit', () => {
    fc.assert(
      fc.property(durationLike, (s) => {
        const ms = parseDuration(s);
        expect(validateChainFile(chainWith(s)), s).toBe(ms !== undefined);
        expect(validatePluginManifest(manifestWith(s)), s).toBe(ms !== undefined);
        if (ms !== undefined) expect(Number.isInteger(ms) && ms >= 1 && ms <= TIMER_LIMIT_MS, s).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('every number: the same', () => {
    fc.assert(
      fc.property(numberLike, (n) => {
        const ms = parseDuration(n);
        expect(validateChainFile(chainWith(n)), String(n)).toBe(ms !== undefined);
        expect(validatePluginManifest(manifestWith(n)), String(n)).toBe(ms !== undefined);
        if (ms !== undefined) expect(Number.isInteger(ms) && ms >= 1 && ms <= TIMER_LIMIT_MS, String(n)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('"1 s", 597h and 3000000 are BAD_DURATION in a chain, at the value, instead of "no timeout"', () => {
    for (const [text, col] of [['"1 s"', 14], ['597h', 14], ['3000000', 14], ['0s', 14], ['" 2s"', 14]] as const) {
      const { plan, diagnostics } = compileChain(`name: c\nsteps:\n  - name: s\n    tool: t\n    timeout: ${text}\n`, { file: 'c.yaml' });
      expect(plan, text).toBeUndefined();
      expect(diagnostics[0], text).toMatchObject({ code: 'BAD_DURATION', line: 5, col });
    }
  });

  it('the editor and the engine accept .5s and 576h; the plan holds their milliseconds', () => {
    const { plan } = compileChain('name: c\ntimeout: 576h\nsteps:\n  - name: s\n    tool: t\n    timeout: .5s\n', { file: 'c.yaml' });
    expect(plan?.timeoutMs).toBe(576 * 3_600_000);
    expect(plan?.steps[0]?.timeoutMs).toBe(500);
  });

  it('a plugin tool timeout of "2 s", 0s or 100000h is BAD_DURATION in the manifest check', () => {
    for (const t of ['"2 s"', '0s', '100000h']) {
      const text = `name: p\nversion: 1.0.0\ntools:\n  - name: t\n    timeout: ${t}\n`;
      const doc = parseYaml(text, 'plugin.yaml').document!;
      expect(checkManifestSchema(doc.value, 'plugin.yaml', doc.sourceMap)[0], t).toMatchObject({ code: 'BAD_DURATION', line: 5, col: 14 });
    }
  });
});
