import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The JSON Schemas ship in the package's `schemas/` folder, next to `src/` and `dist/`. Found by
// walking up from this module so that the same code works from src (tests), dist (the CLI) and
// any other build output folder.

let schemasDir: string | undefined;

function findSchemasDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'schemas');
    if (existsSync(join(candidate, 'chain.schema.json'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('cannot find the schemas/ folder of the toolchain package');
}

/** The absolute path of the package's `schemas/` folder. */
export function schemasDirectory(): string {
  schemasDir ??= findSchemasDir();
  return schemasDir;
}

/** The package's own version, from the package.json beside `schemas/`. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(dirname(schemasDirectory()), 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}
