import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileChain, type NameCatalogue } from '../../src/index.js';
import { badFixtures, FIXTURE_SIGNATURES, FIXTURE_TOOLS } from '../helpers/bad-fixtures.js';

const tools: NameCatalogue = { has: (n) => FIXTURE_TOOLS.includes(n), names: () => FIXTURE_TOOLS, signature: (n) => FIXTURE_SIGNATURES[n] };
const chains: NameCatalogue = { has: (n) => n === 'other', names: () => ['other'] };

describe('every bad fixture gives its diagnostic at its line', () => {
  for (const fx of badFixtures()) {
    it(fx.name, () => {
      const { plan, diagnostics } = compileChain(readFileSync(fx.file, 'utf8'), { file: fx.file, tools, chains });
      expect(plan).toBeUndefined();
      const hit = diagnostics.find((d) => d.code === fx.code);
      expect(hit, `${fx.code} among ${JSON.stringify(diagnostics.map((d) => `${d.code}@${d.line}:${d.col} ${d.message}`))}`).toBeDefined();
      expect(hit!.file).toBe(fx.file);
      if (fx.line !== undefined) expect(hit!.line).toBe(fx.line);
      if (fx.col !== undefined) expect(hit!.col).toBe(fx.col);
      if (fx.suggestion !== undefined) expect(hit!.suggestion).toBe(fx.suggestion);
    });
  }
});

describe('messages a new user meets', () => {
  it('a version YAML read as a number says to quote it', () => {
    const { diagnostics } = compileChain('version: 0.1\nname: n\nsteps:\n  - name: s\n    tool: echo\n', { file: 'n.yaml' });
    expect(diagnostics.find((d) => d.code === 'BAD_TYPE')?.message).toBe("'version' must be a string, not a number: YAML reads 0.1 unquoted as a number; put the value in quotes to keep it as text");
  });
});
