import { readdir } from 'node:fs/promises';
import { printable, printableJson } from '../../common/printable.js';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { createEngine } from '../../engine/engine.js';
import { ToolchainError } from '../../common/errors.js';
import { approvedBy } from '../../call/index.js';
import { diffLines, loadTestFile, testChain, type SuiteResult } from '../../testing/index.js';
import { collect } from '../shared-options.js';
import { EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE } from '../io.js';
import type { CommandContext } from '../main.js';
import { relativeTo, showDiagnostic } from '../paths.js';

// `toolchain test [FILE…]`: runs chain tests (`chains/*.test.yaml`) like a test runner:
// ✓ / ✗ per case with a diff, then `N passed, N failed`. Exit 0 when every case passes, 1 when one
// fails, 2 when a test file is invalid (or there is none).

interface TestFlags {
  readonly json: boolean;
  readonly approve: string[];
}

export function registerTest(program: Command, ctx: CommandContext): void {
  program
    .command('test')
    .description('run chain tests (chains/*.test.yaml): mocked tool results, expected outputs and step statuses')
    .argument('[files...]', 'test files; default: every *.test.yaml in --chains')
    .option('--json', 'print the results as one JSON object', false)
    .option('--approve <tool>', 'allow calls of this dangerous tool when a step is not mocked (repeatable)', collect, [])
    .action(async (files: string[], flags: TestFlags) => {
      ctx.exit(await testCommand(ctx, files, flags));
    });
}

async function testCommand(ctx: CommandContext, files: string[], flags: TestFlags): Promise<number> {
  const { io } = ctx;
  const globals = ctx.globals();
  const named = files.length ? files.map((f) => resolve(io.cwd, f)) : await testFiles(globals.chains);
  if (!named.length) {
    io.stderr.write(`no chain tests found: looked for *.test.yaml in ${relativeTo(io.cwd, globals.chains)}\n`);
    return EXIT_USAGE;
  }
  const engine = await createEngine({ chainsDir: globals.chains, pluginsDir: globals.plugins, load: 'lazy', cache: ctx.diskCache() });
  const results: SuiteResult[] = [];
  let invalid = 0;
  try {
    const approve = approvedBy(flags.approve);
    for (const file of named) {
      let result;
      try {
        result = await testChain(engine, await loadTestFile(file), { approve: async (req) => approve(req) });
      } catch (error) {
        if (!(error instanceof ToolchainError)) throw error;
        invalid++;
        const lines = error.diagnostics.length ? error.diagnostics.map((d) => showDiagnostic(io.cwd, d)) : [`${relativeTo(io.cwd, file)}: ${error.code} ${error.message}`];
        for (const line of lines) io.stderr.write(`${line}\n`);
        continue;
      }
      for (const d of result.warnings) io.stderr.write(`${showDiagnostic(io.cwd, d)}\n`);
      results.push(result);
      if (!flags.json) printSuite(io.stdout, io.cwd, result);
    }
  } finally {
    await engine.close();
  }
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  if (flags.json) {
    const files = results.map((r) => ({
      file: relativeTo(io.cwd, r.file),
      chain: r.chain,
      cases: r.cases.map((c) => ({ name: c.name, passed: c.passed, mismatches: c.mismatches, status: c.result.status, error: c.result.error, duration_ms: c.duration_ms })),
    }));
    io.stdout.write(`${printableJson({ passed, failed, invalid_files: invalid, files }, 2)}\n`);
  } else {
    io.stdout.write(`\n${passed} passed, ${failed} failed\n`);
    if (invalid) io.stderr.write(`${invalid} test file${invalid === 1 ? ' is' : 's are'} invalid\n`);
  }
  return invalid ? EXIT_USAGE : failed ? EXIT_RUN_FAILED : EXIT_OK;
}

function printSuite(out: NodeJS.WritableStream, cwd: string, result: SuiteResult): void {
  out.write(`${relativeTo(cwd, result.file)} (chain ${result.chain})\n`);
  for (const c of result.cases) {
    out.write(`${printable(`  ${c.passed ? '✓' : '✗'} ${c.name} (${c.duration_ms}ms)`)}\n`);
    if (c.passed) continue;
    for (const m of c.mismatches) for (const line of diffLines(m)) out.write(`      ${line}\n`);
    const e = c.result.error;
    if (e) out.write(`${printable(`      run error: ${e.code} ${e.message}${e.step !== undefined ? ` (step '${e.step}')` : ''}`)}\n`);
  }
}

async function testFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => /\.test\.ya?ml$/.test(n)).sort().map((n) => join(dir, n));
  } catch {
    return [];
  }
}
