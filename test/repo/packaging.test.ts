import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/run-cli.js';

// What `npm pack` ships and how the package loads from another project.

function run(file: string, args: readonly string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: 60_000, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, stdout, stderr }),
    );
  });
}

const project = mkdtempSync(join(tmpdir(), 'toolchain-consumer-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const engine = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; peerDependencies?: Record<string, string> };

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
          // toolchain/plugin is the engine's own, handed to the plugin by the engine that loads it.
          if (id.startsWith('.') || BUILTIN.test(id) || id === 'toolchain/plugin') continue;
          imported.add(id.startsWith('@') ? id.split('/').slice(0, 2).join('/') : id.split('/')[0]!);
        }
      }
      const declared = existsSync(join(dir, 'package.json')) ? (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {} : {};
      expect({ plugin, imports: [...imported].sort() }).toEqual({ plugin, imports: Object.keys(declared).sort() });
      for (const [name, range] of Object.entries(declared)) expect({ plugin, name, range }).toEqual({ plugin, name, range: engine.dependencies[name] });
    }
  });

  it('installed from its tarball, `init --shipped` copies shipped plugins that work on their own, whether toolchain is global or in the project', async () => {
    const root = mkdtempSync(join(tmpdir(), 'toolchain-installed-'));
    try {
      const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', root], REPO);
      expect(packed.code, packed.stderr).toBe(0);
      const tarball = join(root, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
      // As `npm install -g` lays it out: the package in PREFIX/lib/node_modules/toolchain, its
      // dependencies in its own node_modules (here each one linked to this clone's copy).
      const pkg = join(root, 'global', 'lib', 'node_modules', 'toolchain');
      mkdirSync(join(pkg, 'node_modules'), { recursive: true });
      expect((await run('tar', ['-xzf', tarball, '-C', pkg, '--strip-components=1'], root)).code).toBe(0);
      // The optional integrations are left out (npm does not install optional peers) and, for
      // @-scoped folders, only the packages the engine depends on are linked.
      const optional = new Set(Object.keys(engine.peerDependencies ?? {}));
      for (const dep of readdirSync(join(REPO, 'node_modules'))) {
        if (dep.startsWith('.') || optional.has(dep)) continue;
        if (!dep.startsWith('@')) { symlinkSync(join(REPO, 'node_modules', dep), join(pkg, 'node_modules', dep)); continue; }
        mkdirSync(join(pkg, 'node_modules', dep));
        for (const sub of readdirSync(join(REPO, 'node_modules', dep))) if (!optional.has(`${dep}/${sub}`)) symlinkSync(join(REPO, 'node_modules', dep, sub), join(pkg, 'node_modules', dep, sub));
      }
      const bin = join(pkg, 'bin', 'toolchain.js');

      const project = join(root, 'project');
      mkdirSync(project);
      const init = await run(process.execPath, [bin, 'init', '--shipped', 'geo,text,http', '--no-starter'], project);
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain('created plugins/geo/ (shipped plugin geo with city-timezones@1.3.4 in its node_modules)');
      // text imports nothing but the engine's own toolchain/plugin, which the engine hands it.
      expect(init.stdout).toContain('created plugins/text/ (shipped plugin text)');
      expect(init.stdout).toContain('created plugins/http/ (shipped plugin http)');
      expect(init.stdout).toContain('next: toolchain list tools');
      // Copies, not links: the project keeps working if the engine's installation changes.
      expect(lstatSync(join(project, 'plugins', 'geo', 'node_modules', 'city-timezones')).isSymbolicLink()).toBe(false);
      expect(readFileSync(join(project, 'plugins', 'geo', 'plugin.yaml'), 'utf8').split('\n')[0]).toBe('# yaml-language-server: $schema=../../../global/lib/node_modules/toolchain/schemas/plugin.schema.json');
      // In a project's node_modules (what `npm install toolchain` makes), started as npx starts it.
      const local = join(root, 'local');
      mkdirSync(join(local, 'node_modules', '.bin'), { recursive: true });
      symlinkSync(pkg, join(local, 'node_modules', 'toolchain'));
      symlinkSync('../toolchain/bin/toolchain.js', join(local, 'node_modules', '.bin', 'toolchain'));
      const npx = await run(process.execPath, [join(local, 'node_modules', '.bin', 'toolchain'), 'init', '--shipped', 'geo'], local);
      expect(npx.code, npx.stderr).toBe(0);
      expect(npx.stdout).toContain('\nnext: npx toolchain run hello --input name=Ada\n');
      expect(existsSync(join(local, 'plugins', 'geo', 'node_modules', 'city-timezones', 'data', 'cityMap.json'))).toBe(true);
      // The engine's own copies of the plugins' packages gone: the plugins load theirs.
      for (const dep of ['city-timezones']) rmSync(join(pkg, 'node_modules', dep));
      mkdirSync(join(project, 'chains'));
      writeFileSync(
        join(project, 'chains', 'where.yaml'),
        'name: where\ninputs: { q: string }\nsteps:\n  - { name: locate, tool: find_city, input_map: { text: $.q } }\n  - { name: pick, tool: json_query, input_map: { value: { a: [1, 2] }, path: "$$.a[1]" } }\n  - { name: call, tool: http_request, on_error: continue, input_map: { url: "http://127.0.0.1:9/" } }\noutputs: { city: $.locate.city, second: $.pick.matches, refused: $.call.error.code }\n',
      );
      for (const isolation of ['none', 'worker']) {
        const where = await run(process.execPath, [bin, 'run', 'where', '--input', 'q=What time is it in Osaka?', '--store', 'memory:', '--isolation', isolation], project);
        expect(where.code, where.stderr).toBe(0);
        // http's address policy is the engine's own, through toolchain/plugin: loopback is refused.
        expect(JSON.parse(where.stdout)).toEqual({ city: 'Osaka', second: [2], refused: 'ADDRESS_REFUSED' });
      }
      // Without the optional packages, chains run on SQLite, and a feature that needs one says
      // in one line which to install.
      const sqlite = await run(process.execPath, [bin, 'run', 'where', '--input', 'q=Osaka', '--store', 'sqlite:runs.db'], project);
      expect(sqlite.code, sqlite.stderr).toBe(0);
      const missing = async (args: string[]): Promise<string> => {
        const r = await run(process.execPath, [bin, ...args], project);
        expect(r.code, r.stderr).toBe(2);
        return r.stderr.trim();
      };
      expect(await missing(['serve', '--port', '0'])).toBe('error: PACKAGE_MISSING install fastify to use toolchain serve and createServer (npm install fastify)');
      expect(await missing(['runs', 'list', '--store', 'postgres://127.0.0.1/test'])).toBe('error: PACKAGE_MISSING install pg to use postgres:// run stores (npm install pg)');
      expect(await missing(['runs', 'list', '--store', 'redis://127.0.0.1:6379'])).toBe('error: PACKAGE_MISSING install ioredis to use redis:// run stores and queues (npm install ioredis)');
      expect(await missing(['graph', 'where', '--format', 'png', '--output', 'where.png'])).toBe('error: PACKAGE_MISSING install @resvg/resvg-js to use toolchain graph --format png (npm install @resvg/resvg-js)');

    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);

  it('exports from each subpath what the API page lists, and nothing from dist/ but through them', async () => {
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    if (!existsSync(join(project, 'node_modules', 'toolchain'))) symlinkSync(REPO, join(project, 'node_modules', 'toolchain'), 'dir');
    const page = readFileSync(join(REPO, 'docs/reference/api.md'), 'utf8');
    const script = "for (const e of process.argv.slice(1)) console.log(e, Object.keys(await import(e)).sort().join(' '));";
    const subpaths = [...page.matchAll(/^## (toolchain\S*)$/gm)].map((m) => m[1]!);
    expect(subpaths).toEqual(['toolchain', 'toolchain/llm', 'toolchain/mcp', 'toolchain/serve', 'toolchain/store', 'toolchain/testing', 'toolchain/observe', 'toolchain/plugin']);
    const listed = await run(process.execPath, ['--input-type=module', '-e', script, ...subpaths], project);
    expect(listed.code, listed.stderr).toBe(0);
    for (const line of listed.stdout.trim().split('\n')) {
      const [subpath, ...names] = line.split(' ');
      const section = page.split(`## ${subpath}\n`)[1]!.split('\n## ')[0]!;
      expect(section, subpath).toContain(`${names.length} values,`);
    }
    // A deep import is refused: the exports map is the surface.
    const deep = await run(process.execPath, ['--input-type=module', '-e', "await import('toolchain/dist/executor/run.js')"], project);
    expect(deep.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('loads with require() and with import from another project', async () => {
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    if (!existsSync(join(project, 'node_modules', 'toolchain'))) symlinkSync(REPO, join(project, 'node_modules', 'toolchain'), 'dir');
    writeFileSync(join(project, 'use.cjs'), "const t = require('toolchain'); const { testChain } = require('toolchain/testing'); console.log(typeof t.createEngine, typeof testChain);\n");
    writeFileSync(join(project, 'use.mjs'), "import { createEngine } from 'toolchain'; import { testChain } from 'toolchain/testing'; console.log(typeof createEngine, typeof testChain);\n");
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
