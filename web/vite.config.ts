import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The run inspector: built into dist/web/, which `toolchain serve` serves at `/`. Relative asset
// URLs, so the page works behind any path prefix; no CDN, everything is in the bundle.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    // .vite/manifest.json: how the server tells this built folder from the sources, and which files are hashed.
    manifest: true,
  },
});
