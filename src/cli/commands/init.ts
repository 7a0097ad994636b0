import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Command } from 'commander';
import { ToolchainError } from '../../common/errors.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { schemasDirectory } from '../../schemas/schema-files.js';
import { STARTER_FILES } from '../starter/files.js';

export function registerInit(program: Command, ctx: CommandContext): void {
  program
    .command('init')
    .description('create a starter plugin (one TypeScript tool) and a chain that uses it')
    .action(async () => {
      const { chains, plugins } = ctx.globals();
      // The starter's paths are relative to the project: chains/ and plugins/ follow the options.
      const target = (path: string): string =>
        path.startsWith('chains/') ? join(chains, path.slice('chains/'.length)) : join(plugins, path.slice('plugins/'.length));
      const existing: string[] = [];
      for (const f of STARTER_FILES) if (await exists(target(f.path))) existing.push(relative(ctx.io.cwd, target(f.path)));
      if (existing.length) throw new ToolchainError('USAGE', `init would overwrite ${existing.join(', ')}; nothing was written`);
      for (const f of STARTER_FILES) {
        await mkdir(dirname(target(f.path)), { recursive: true });
        await writeFile(target(f.path), withSchemaPath(f.text, target(f.path)), { flag: 'wx' });
        ctx.io.stdout.write(`created ${relative(ctx.io.cwd, target(f.path))}\n`);
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
      // Started as `node …/bin/toolchain.js` (the getting-started guide's flow) the hint says so; installed, `toolchain`.
      const script = process.argv[1] ?? '';
      const bin = /\.[cm]?js$/.test(script) ? `node ${relative(ctx.io.cwd, script) || script}` : 'toolchain';
      ctx.io.stdout.write(`\nnext: ${bin}${folders ? ` ${folders}` : ''} run hello --input name=Ada\n`);
      ctx.exit(EXIT_OK);
    });
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
