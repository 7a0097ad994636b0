import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Where the inspector's built files are (`npm run build` writes them to dist/web/): next to the
// compiled server (dist/serve/ → dist/web/), next to the CLI bundle (dist/ → dist/web/), or, when
// the sources run directly (tests), in dist/web/ of the repository.
const CANDIDATES = ['../web/', './web/', '../../dist/web/'];

export function inspectorDir(): string | undefined {
  for (const relative of CANDIDATES) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return undefined;
}
