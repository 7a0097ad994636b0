#!/usr/bin/env node
// The published entry: runs the CLI, bundled into one file by `npm run build` (see scripts/bundle-cli.js).
import { main } from '../dist/cli.bundle.js';

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  cwd: process.cwd(),
  env: process.env,
});
