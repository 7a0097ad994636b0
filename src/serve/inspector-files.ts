import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The run inspector's built files (`npm run build` writes them to dist/web/), found next to
// whichever compiled file runs the server: dist/serve/ (the unbundled build), dist/ (the CLI and
// library bundles), dist/chunks/, or src/serve/ when the sources run directly (tests). A folder
// counts only if Vite's build manifest is in it: from dist/ the first guess is the repository's
// own web/ folder, the page's sources, which a browser cannot run and which must not be served.
// Only what the manifest names (and the page) is served; those names carry a content hash, so
// they may be cached for good, while the page is always revalidated.

const CANDIDATES = ['../web/', './web/', '../../dist/web/'];
const MANIFEST = '.vite/manifest.json';
const PAGE = 'index.html';

export interface InspectorFiles {
  readonly dir: string;
  /** Paths under `dir` (with `/`) that are served; undefined: every file (a folder chosen by the caller without a manifest). */
  readonly served: ReadonlySet<string> | undefined;
  /** Served paths whose names change with their content. */
  readonly hashed: ReadonlySet<string>;
}

interface ManifestChunk {
  readonly file?: string;
  readonly css?: readonly string[];
  readonly assets?: readonly string[];
}

/** The built inspector shipped with the engine, or undefined when it was not built. */
export function builtInspector(): InspectorFiles | undefined {
  for (const relative of CANDIDATES) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    const files = builtFiles(dir);
    if (files !== undefined) return files;
  }
  return undefined;
}

/** A folder the caller chose: its built files if it has a manifest, else every file in it, none cached for good. */
export function inspectorFilesIn(dir: string): InspectorFiles {
  return builtFiles(dir) ?? { dir, served: undefined, hashed: new Set() };
}

function builtFiles(dir: string): InspectorFiles | undefined {
  if (!existsSync(join(dir, PAGE)) || !existsSync(join(dir, MANIFEST))) return undefined;
  let manifest: Record<string, ManifestChunk>;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Record<string, ManifestChunk>;
  } catch {
    return undefined;
  }
  const hashed = new Set<string>();
  for (const chunk of Object.values(manifest)) {
    for (const file of [chunk.file, ...(chunk.css ?? []), ...(chunk.assets ?? [])]) if (typeof file === 'string') hashed.add(file);
  }
  return { dir, served: new Set([PAGE, ...hashed]), hashed };
}
