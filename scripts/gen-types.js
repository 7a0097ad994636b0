// Derives the TypeScript types of chain files and plugin manifests from schemas/*.schema.json, so the schemas stay
// the single source of truth. `npm run gen:types` rewrites the file; a test fails when it drifts.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');

export const targets = [
  { schema: 'schemas/chain.schema.json', out: 'src/compiler/chain-file.generated.ts', name: 'ChainFile' },
  { schema: 'schemas/plugin.schema.json', out: 'src/plugins/manifest.generated.ts', name: 'PluginManifest' },
];

export async function generate(target) {
  const schema = JSON.parse(await readFile(join(REPO, target.schema), 'utf8'));
  // `parameters` and `returns` are checked against the draft-07 meta-schema by reference; their
  // TypeScript type is given by tsType, and resolving the reference would need the network.
  if (schema.definitions?.jsonSchema) delete schema.definitions.jsonSchema.allOf;
  return compile(schema, target.name, {
    bannerComment: `// Generated from ${target.schema} by \`npm run gen:types\`. Do not edit by hand.`,
    additionalProperties: false,
    unreachableDefinitions: false,
    style: { singleQuote: true, printWidth: 110 },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const target of targets) {
    await writeFile(join(REPO, target.out), await generate(target));
    console.log(`wrote ${target.out}`);
  }
}
