// Bundles the CLI into one file after tsc has built dist/: loading ~300 small modules cost a
// cold `toolchain` start more than 100 ms. The library entry (dist/index.js) stays unbundled.
// Packages that are loaded lazily or hold data files stay outside the bundle.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [join(REPO, 'dist', 'cli', 'main.js')],
  outfile: join(REPO, 'dist', 'cli.bundle.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['sucrase', 'jiti', 'chokidar', '@modelcontextprotocol/sdk'],
  // Bundled CommonJS packages call require(): give the ES module bundle one.
  banner: { js: "import { createRequire as __toolchainRequire } from 'node:module'; const require = __toolchainRequire(import.meta.url);" },
  logLevel: 'warning',
});
