import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Where the compiled worker entry (worker-main.js) is. Beside this module when it runs from the
// build (dist/); from the CLI bundle or the TypeScript sources (tests), the package's own
// dist/ copy, found by walking up to the folder that holds it. Workers and child processes run
// plain JavaScript, so isolation needs the package built.

const SIBLING = 'worker-main.js';
const IN_PACKAGE = join('dist', 'plugins', 'isolation', SIBLING);

let found: string | undefined;

export function workerEntry(): string {
  if (found !== undefined) return found;
  const here = fileURLToPath(import.meta.url);
  const sibling = join(dirname(here), SIBLING);
  if (here.endsWith('.js') && existsSync(sibling)) return (found = sibling);
  let dir = dirname(here);
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, IN_PACKAGE);
    if (existsSync(candidate)) return (found = candidate);
    dir = dirname(dir);
  }
  throw new Error(`cannot find ${IN_PACKAGE} of the toolchain package: run \`npm run build\` before isolating plugins`);
}
