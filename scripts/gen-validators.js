// Compiles the chain and plugin JSON Schemas (and the draft-07 meta-schema) into standalone validator code at development time,
// so that a CLI start does not spend tens of milliseconds in Ajv's compiler. `npm run gen:types`
// rewrites the file; a test fails when it drifts from the schemas.
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
export const OUT = 'src/schemas/validators.generated.ts';

export async function generateValidators() {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strictSchema: true,
    strictTypes: false,
    strictRequired: false,
    strictTuples: false,
    code: { source: true, esm: true, lines: false },
  });
  // Read by json-schema-to-typescript when deriving the types.
  ajv.addKeyword({ keyword: 'tsType', schemaType: 'string' });
  // Shown by the YAML language server when a pattern fails; no meaning for validation.
  ajv.addKeyword({ keyword: 'patternErrorMessage', schemaType: 'string' });
  const load = async (name) => JSON.parse(await readFile(join(REPO, 'schemas', name), 'utf8'));
  ajv.addSchema(await load('chain.schema.json'), 'chain');
  ajv.addSchema(await load('plugin.schema.json'), 'plugin');
  // The JSON Schema meta-schema too: tools' parameters are checked against it when they load.
  // And the same meta-schema with every subschema position accepting any object or boolean: one
  // schema object checked without the ones below it (src/registry/meta-check.ts walks those).
  ajv.addMetaSchema(oneLevel(createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json')), 'json-schema-node');
  const code = standaloneCode.default(ajv, {
    validateChain: 'chain',
    validatePlugin: 'plugin',
    validateJsonSchema: 'http://json-schema.org/draft-07/schema',
    validateJsonSchemaNode: 'json-schema-node',
  });
  return [
    '// Generated from schemas/*.schema.json by `npm run gen:types`. Do not edit by hand.',
    '// @ts-nocheck -- Ajv standalone output; its runtime helpers are CommonJS, hence createRequire.',
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    withFastPatterns(code.replace(/^"use strict";/, '')),
    '',
  ].join('\n');
}

/** The draft-07 meta-schema with each `{ $ref: '#' }` (a subschema) made `{ type: [object, boolean] }`. */
function oneLevel(metaSchema) {
  const copy = JSON.parse(JSON.stringify(metaSchema), (_key, value) =>
    value !== null && typeof value === 'object' && value.$ref === '#' && Object.keys(value).length === 1 ? { type: ['object', 'boolean'] } : value,
  );
  return { ...copy, $id: 'https://toolchain.dev/schemas/json-schema-node.json', title: 'One schema object, not the schemas below it' };
}

// V8 compiles a regular expression on its first use, and again to machine code after a few: the
// 5,000-character semver-range pattern of a plugin's `requires` takes 10-14 ms each time, which
// was the largest single cost of loading the shipped plugins. Such a pattern is tested first
// against a short one that accepts only strings the long one accepts (the common forms: `text`,
// `text >= 1.0.0`, `text ^1.2`, `geo 1.x`); the long one is built only when the short one fails.
// test/schemas/types.test.ts checks the subset property on many strings.
export const FAST_PATTERNS = {
  requirement: {
    fast: '^\\s*[A-Za-z_][A-Za-z0-9_-]*(?:\\s+(?:[<>]=?|=|\\^|~)?\\s*v?(?:0|[1-9][0-9]*)(?:\\.(?:0|[1-9][0-9]*|[xX*])){0,2})?\\s*$',
    /** The start of the schema's pattern for a requirement (schemas/plugin.schema.json). */
    full: '^\\s*[A-Za-z_][A-Za-z0-9_-]*(?:\\s+(?:v?(?:[xX*]|',
  },
};

function withFastPatterns(code) {
  const { fast, full } = FAST_PATTERNS.requirement;
  let replaced = 0;
  const out = code.replace(/const (pattern\d+) = new RegExp\(("(?:[^"\\]|\\.)*"), "u"\);/g, (whole, name, source) => {
    if (!JSON.parse(source).startsWith(full)) return whole;
    replaced += 1;
    return `const ${name}Fast = /${fast}/u;let ${name}Full;const ${name} = {test: (s) => ${name}Fast.test(s) || (${name}Full ??= new RegExp(${source}, "u")).test(s)};`;
  });
  if (replaced !== 1) throw new Error(`expected one requirement pattern in the generated validators, found ${replaced}`);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await writeFile(join(REPO, OUT), await generateValidators());
  console.log(`wrote ${OUT}`);
}
