import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { ToolchainError } from '../../common/errors.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { schemasDirectory } from '../../schemas/schema-files.js';
import { copyShippedPlugin, parseShippedNames, withRequirements } from '../shipped-plugins.js';
import { existsSync } from 'node:fs';
import { STARTER_FILES } from '../starter/files.js';

interface InitFlags {
  /** `geo,http` or `all`: shipped plugins to copy into the plugins folder. */
  readonly shipped?: string;
  /** false with --no-starter. */
  readonly starter: boolean;
}

export function registerInit(program: Command, ctx: CommandContext): void {
  program
    .command('init')
    .description('create a starter plugin (one TypeScript tool) and a chain that uses it; --shipped copies plugins that ship with toolchain')
    .option('--shipped <names>', 'also copy these shipped plugins (comma-separated, or all: files, geo, http, shell, text) into the plugins folder, with the packages they import')
    .option('--no-starter', 'without the starter plugin and chain (with --shipped: add shipped plugins to a project)')
    .action(async (flags: InitFlags) => {
      const { chains, plugins } = ctx.globals();
      // A shipped plugin that another one asked for requires comes along, unless the folder has it.
      const asked = flags.shipped === undefined ? [] : parseShippedNames(flags.shipped);
      const { names: shipped, requiredBy } = withRequirements(asked, (name) => existsSync(join(plugins, name)));
      if (!flags.starter && shipped.length === 0) throw new ToolchainError('USAGE', '--no-starter leaves nothing to do without --shipped NAMES');
      // The starter's paths are relative to the project: chains/ and plugins/ follow the options.
      const target = (path: string): string =>
        path.startsWith('chains/') ? join(chains, path.slice('chains/'.length)) : join(plugins, path.slice('plugins/'.length));
      const starter = flags.starter ? STARTER_FILES : [];
      const existing: string[] = [];
      for (const f of starter) if (await exists(target(f.path))) existing.push(relative(ctx.io.cwd, target(f.path)));
      for (const name of shipped) if (await exists(join(plugins, name))) existing.push(`${relative(ctx.io.cwd, join(plugins, name))}/`);
      if (existing.length) throw new ToolchainError('USAGE', `init would overwrite ${existing.join(', ')}; nothing was written`);
      for (const f of starter) {
        await mkdir(dirname(target(f.path)), { recursive: true });
        await writeFile(target(f.path), withSchemaPath(f.text, target(f.path)), { flag: 'wx' });
        ctx.io.stdout.write(`created ${relative(ctx.io.cwd, target(f.path))}\n`);
      }
      for (const name of shipped) {
        const folder = join(plugins, name);
        const copied = await copyShippedPlugin(name, folder);
        const manifest = join(folder, 'plugin.yaml');
        await writeFile(manifest, withSchemaPath(await readFile(manifest, 'utf8'), manifest));
        const packages = copied.packages.length ? ` with ${copied.packages.join(', ')} in its node_modules` : '';
        const why = requiredBy.has(name) ? `, which ${requiredBy.get(name)} requires` : '';
        ctx.io.stdout.write(`created ${relative(ctx.io.cwd, folder)}/ (shipped plugin ${name}${why}${packages})\n`);
      }
      // The run store and other local state live in .toolchain/: never commit them.
      const ignore = join(ctx.io.cwd, '.gitignore');
      const current = (await exists(ignore)) ? await readFile(ignore, 'utf8') : '';
      if (!/^\/?\.toolchain\/?$/m.test(current)) {
        await writeFile(ignore, `${current}${current && !current.endsWith('\n') ? '\n' : ''}.toolchain/\n`);
        ctx.io.stdout.write(`${current ? 'updated' : 'created'} .gitignore\n`);
      }
      // The hint names the folders this command used, so that it works as it is printed.
      const folders = [chains !== join(ctx.io.cwd, 'chains') ? `--chains ${relative(ctx.io.cwd, chains) || '.'}` : '', plugins !== join(ctx.io.cwd, 'plugins') ? `--plugins ${relative(ctx.io.cwd, plugins) || '.'}` : ''].filter(Boolean).join(' ');
      const next = flags.starter ? 'run hello --input name=Ada' : 'list tools';
      ctx.io.stdout.write(`\nnext: ${commandName(process.argv[1] ?? '', ctx.io.cwd)}${folders ? ` ${folders}` : ''} ${next}\n`);
      ctx.exit(EXIT_OK);
    });
}

/**
 * How to start this CLI again from `cwd`, as it was started: installed in the project (its
 * node_modules/.bin, through npx or an npm script) `npx toolchain`, which is the one form that
 * works there; as `node …/bin/toolchain.js` (a clone) that command; installed globally `toolchain`.
 */
export function commandName(script: string, cwd: string): string {
  const parts = resolve(cwd, script).split(sep);
  const at = parts.lastIndexOf('node_modules');
  if (at > 0) {
    const project = parts.slice(0, at).join(sep) || sep;
    const inside = relative(project, cwd);
    if (!inside.startsWith('..') && !inside.startsWith(sep)) return 'npx toolchain';
    return 'toolchain';
  }
  if (/\.[cm]?js$/.test(script)) return `node ${relative(cwd, script) || script}`;
  return 'toolchain';
}

/** Points the editor's `$schema` comment at this package's schemas, wherever the project is. */
function withSchemaPath(text: string, file: string): string {
  return text.replace(/\$schema=\S*\/([\w.]+\.schema\.json)/, (_, name: string) =>
    `$schema=${relative(dirname(file), join(schemasDirectory(), name)).split(sep).join('/')}`,
  );
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
