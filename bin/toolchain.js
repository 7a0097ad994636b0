#!/usr/bin/env node
// The command-line entry. It runs the CLI bundle (dist/cli.bundle.cjs, made by `npm run build`)
// through vm.Script with V8's code cache, kept next to the bundle per Node version and command:
// compiling the bundle is a large part of a cold start, and a cache written after a command has
// run also holds the functions that command compiled. V8 reuses a cache only for the exact same
// source (it rejects a stale one, which is then rewritten). Where the cache cannot be written, the
// CLI just compiles as usual.
import { isAscii } from 'node:buffer';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const file = fileURLToPath(new URL('../dist/cli.bundle.cjs', import.meta.url));
if (process.argv.includes('--debug')) {
  // Stack traces through the bundle's source map (dist/cli.bundle.cjs.map): Node's own loader
  // reads it, which vm.Script does not; no code cache then.
  process.setSourceMapsEnabled(true);
  const code = await createRequire(file)(file).main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, cwd: process.cwd(), env: process.env });
  await flushed();
  process.exit(code);
}
const command = /^[a-z]+$/.test(process.argv[2] ?? '') ? process.argv[2] : 'other';
const cacheFile = `${file}.${process.version}.${command}.v8cache`;
let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  // no cache yet
}
// The bundle is ASCII (scripts/bundle-cli.js makes it so): Latin-1 then reads it as one-byte
// text, much faster than decoding UTF-8; anything else is decoded as UTF-8.
const bytes = readFileSync(file);
const script = new vm.Script(Module.wrap(bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8')), { filename: file, cachedData });
// A script restored from the code cache cannot import() on Node 20: the bundle imports its lazily
// loaded packages through this module instead (src/import-module.ts).
globalThis.__toolchainImport = (specifier) => import(specifier);
const bundle = { exports: {} };
script.runInThisContext()(bundle.exports, createRequire(file), bundle, file, dirname(file));

const code = await bundle.exports.main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  cwd: process.cwd(),
  env: process.env,
});
process.exitCode = code;

if (cachedData === undefined || script.cachedDataRejected) {
  // Made after the run, so the functions it compiled are in the cache too.
  try {
    const temp = `${cacheFile}.${process.pid}`;
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, cacheFile);
  } catch {
    // read-only install: no cache
  }
}

// The command is over once its result is printed: a timer, socket or database client a tool left
// open must not keep the process alive.
await flushed();
process.exit(code);

/** Resolves once what was written to stdout and stderr has been handed to the OS. */
function flushed() {
  return Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => (stream.writableLength === 0 ? resolve() : stream.write('', resolve)))));
}
