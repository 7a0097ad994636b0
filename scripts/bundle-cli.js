// Bundles the CLI into one CommonJS file after tsc has built dist/. Two costs of a cold start go
// away: loading ~300 small modules (more than 100 ms), and compiling the code, since bin/toolchain.js
// runs a CommonJS bundle through vm.Script with V8's code cache (ES modules cannot use one on
// Node 20). Packages that are loaded lazily (or only by some commands) stay outside the bundle.
//
// The library entry is bundled too (dist/index.bundle.js, what `import 'toolchain'` loads): ES
// modules, split so that what the sources load with import() (the HTTP server, the observer, the
// agent loop…) stays in chunks of its own, loaded when used — an external package imported by such
// a module would otherwise be hoisted into the entry and loaded by every import. dist/index.js (the
// unbundled build) stays for tools that want the modules one by one.
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [join(REPO, 'dist', 'cli', 'main.js')],
  outfile: join(REPO, 'dist', 'cli.bundle.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // `serve` loads its server packages, and `graph --format png` its renderer, only when used.
  external: ['sucrase', 'chokidar', '@modelcontextprotocol/sdk', 'fastify', '@fastify/static', 'pino', 'pino-pretty', 'prom-client', '@opentelemetry/api', '@resvg/resvg-js', '@dagrejs/dagre', 'bullmq', 'ioredis'],
  // The sources are ES modules that locate files from import.meta.url.
  define: { 'import.meta.url': '__toolchainModuleUrl' },
  banner: { js: "const __toolchainModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  // For --debug: bin/toolchain.js then loads the bundle with Node's source maps on, so stacks name
  // the TypeScript file and line. The map carries the sources themselves (src/ is not shipped).
  sourcemap: 'linked',
  sourcesContent: true,
  logLevel: 'warning',
});

// The CLI bundle in pure ASCII: bin/toolchain.js then reads it as Latin-1 into a one-byte string
// (2 ms) instead of decoding UTF-8 into a two-byte one (6-10 ms for 1.8 MB). esbuild escapes
// strings already; what is left is comments and a regular expression or two, where \uXXXX means
// the same character (a comment only reads differently).
const cliBundle = join(REPO, 'dist', 'cli.bundle.cjs');
writeFileSync(cliBundle, readFileSync(cliBundle, 'utf8').replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));

await build({
  // The root entry and the subpaths (toolchain/llm, …) in one build, so that what they share is
  // one chunk: an application importing two of them loads the engine once.
  entryPoints: {
    'index.bundle': join(REPO, 'dist', 'index.js'),
    ...Object.fromEntries(['llm', 'mcp', 'serve', 'store', 'testing', 'observe'].map((name) => [`${name}.bundle`, join(REPO, 'dist', 'entry', `${name}.js`)])),
  },
  outdir: join(REPO, 'dist'),
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['sucrase', 'chokidar', '@modelcontextprotocol/sdk', 'fastify', '@fastify/static', 'pino', 'pino-pretty', 'prom-client', '@opentelemetry/api', '@resvg/resvg-js', '@dagrejs/dagre', 'better-sqlite3', 'pg', 'ioredis', 'bullmq', 'esbuild'],
  // CommonJS dependencies bundled into an ES module call require() for Node's built-ins.
  banner: { js: "import { createRequire as __toolchainCreateRequire } from 'node:module'; const require = __toolchainCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
