import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from './helpers/run-cli.js';

// What `npm pack` ships and how the package loads from another project (issue 13 §4).

function run(file: string, args: readonly string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: 60_000, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, stdout, stderr }),
    );
  });
}

const project = mkdtempSync(join(tmpdir(), 'toolchain-consumer-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('the package', () => {
  it("ships no V8 code caches, no source maps but the CLI bundle's (which carries its sources), and a LICENSE", async () => {
    // A code cache as bin/toolchain.js leaves it after a command: machine-local, never shipped.
    writeFileSync(join(REPO, 'dist', `cli.bundle.cjs.${process.version}.packtest.v8cache`), 'x');
    const { code, stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], REPO);
    rmSync(join(REPO, 'dist', `cli.bundle.cjs.${process.version}.packtest.v8cache`), { force: true });
    expect(code).toBe(0);
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(files.filter((f) => f.includes('v8cache') || f.endsWith('.map'))).toEqual(['dist/cli.bundle.cjs.map']);
    // src/ is not shipped: the one map must hold every source it names.
    const map = JSON.parse(readFileSync(join(REPO, 'dist', 'cli.bundle.cjs.map'), 'utf8')) as { sources: string[]; sourcesContent: (string | null)[] };
    expect(map.sourcesContent).toHaveLength(map.sources.length);
    expect(map.sourcesContent.filter((s) => typeof s !== 'string')).toEqual([]);
    expect(files).toContain('LICENSE');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('schemas/chain.schema.json');
    // The shipped plugins, each with the package.json that names the packages it imports.
    for (const plugin of ['files', 'geo', 'http', 'shell', 'text']) expect(files).toContain(`plugins/${plugin}/plugin.yaml`);
    expect(files).toContain('plugins/geo/package.json');
    expect(files.filter((f) => f.startsWith('plugins/') && f.includes('node_modules'))).toEqual([]);
  });

  it('declares, for each shipped plugin, every package its code imports, in a package.json of its own, in the range the engine installs', () => {
    const engine = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const BUILTIN = /^node:/;
    for (const plugin of readdirSync(join(REPO, 'plugins'))) {
      const dir = join(REPO, 'plugins', plugin);
      const sources = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.[cm]?[jt]s$/.test(f));
      const imported = new Set<string>();
      for (const file of sources) {
        const text = readFileSync(join(dir, file), 'utf8');
        // Value imports and requires (type-only imports are erased).
        for (const m of text.matchAll(/^\s*import\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|createRequire\([^)]*\)\(\s*(?:['"]([^'"]+)['"]|DATA)/gm)) {
          const id = m[1] ?? m[2] ?? m[3] ?? (/const DATA = '([^']+)'/.exec(text)?.[1] as string);
          if (id.startsWith('.') || BUILTIN.test(id)) continue;
          imported.add(id.startsWith('@') ? id.split('/').slice(0, 2).join('/') : id.split('/')[0]!);
        }
      }
      const declared = existsSync(join(dir, 'package.json')) ? (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {} : {};
      expect({ plugin, imports: [...imported].sort() }).toEqual({ plugin, imports: Object.keys(declared).sort() });
      for (const [name, range] of Object.entries(declared)) expect({ plugin, name, range }).toEqual({ plugin, name, range: engine.dependencies[name] });
    }
  });

  it('loads with require() and with import from another project', async () => {
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    if (!existsSync(join(project, 'node_modules', 'toolchain'))) symlinkSync(REPO, join(project, 'node_modules', 'toolchain'), 'dir');
    writeFileSync(join(project, 'use.cjs'), "const t = require('toolchain'); console.log(typeof t.createEngine, typeof t.testChain);\n");
    writeFileSync(join(project, 'use.mjs'), "import { createEngine, testChain } from 'toolchain'; console.log(typeof createEngine, typeof testChain);\n");
    const cjs = await run(process.execPath, ['use.cjs'], project);
    expect(cjs.stdout.trim(), cjs.stderr).toBe('function function');
    const esm = await run(process.execPath, ['use.mjs'], project);
    expect(esm.stdout.trim(), esm.stderr).toBe('function function');
  });

  it('type-checks a typed handler with registerTool and a plugin module typed from toolchain/plugin, and refuses a wrong one', async () => {
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    const link = join(project, 'node_modules', 'toolchain');
    if (!existsSync(link)) symlinkSync(REPO, link, 'dir');
    const tsconfig = { compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', skipLibCheck: true, types: [] }, include: ['*.ts'] };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(project, 'tool.ts'),
      [
        "import type { ToolHandler } from 'toolchain/plugin';",
        'export const double: ToolHandler<{ n: number }, { n: number }> = (args, ctx) => {',
        "  ctx.log('doubling', { n: args.n });",
        '  return { n: args.n * 2 };',
        '};',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'register.ts'),
      [
        "import { createEngine } from 'toolchain';",
        "import { double } from './tool.js';",
        'const engine = await createEngine();',
        "engine.registerTool({ name: 'double', parameters: { type: 'object' }, handler: double });",
        "engine.registerTool({ name: 'greet', parameters: { type: 'object' }, handler: (args: { who: string }) => `hi ${args.who.toUpperCase()}` });",
        '',
      ].join('\n'),
    );
    const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
    const ok = await run(process.execPath, [tsc, '-p', project], project);
    expect(ok.stdout + ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    writeFileSync(join(project, 'wrong.ts'), "import type { ToolHandler } from 'toolchain/plugin';\nexport const bad: ToolHandler<{ n: number }> = (args) => args.n.toUpperCase();\n");
    const wrong = await run(process.execPath, [tsc, '-p', project], project);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toMatch(/wrong\.ts\(2,\d+\): error TS2339: Property 'toUpperCase' does not exist on type 'number'/);
  }, 60_000);
});
