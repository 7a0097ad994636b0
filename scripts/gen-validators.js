// Compiles the chain and plugin JSON Schemas (and the draft-07 meta-schema) into standalone validator code at development time,
// so that a CLI start does not spend tens of milliseconds in Ajv's compiler. `npm run gen:types`
// rewrites the file; a test fails when it drifts from the schemas.
import { readFile, writeFile } from 'node:fs/promises';
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
  const code = standaloneCode.default(ajv, {
    validateChain: 'chain',
    validatePlugin: 'plugin',
    validateJsonSchema: 'http://json-schema.org/draft-07/schema',
  });
  return [
    '// Generated from schemas/*.schema.json by `npm run gen:types`. Do not edit by hand.',
    '// @ts-nocheck -- Ajv standalone output; its runtime helpers are CommonJS, hence createRequire.',
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    code.replace(/^"use strict";/, ''),
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await writeFile(join(REPO, OUT), await generateValidators());
  console.log(`wrote ${OUT}`);
}
