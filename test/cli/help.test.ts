import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { REPO } from '../helpers/run-cli.js';

// Help texts are documentation a user reads in the terminal: they say the rule in plain words and
// cite no document outside the repository (a section sign, a specification, an issue number).

async function help(args: readonly string[]): Promise<string> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let text = '';
  stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const code = await main([...args, '--help'], { stdout, stderr, stdin: new PassThrough(), cwd: REPO, env: {} });
  expect(code, text).toBe(0);
  return text;
}

/** The commands a help page lists under "Commands:". */
function commandsOf(page: string): string[] {
  const section = page.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!).filter((name) => name !== 'help');
}

describe('help texts', () => {
  it('cite no outside document, on any command or subcommand', async () => {
    const pages = new Map<string, string>();
    const visit = async (path: string[]): Promise<void> => {
      const page = await help(path);
      pages.set(path.join(' ') || '(toolchain)', page);
      for (const sub of commandsOf(page)) await visit([...path, sub]);
    };
    await visit([]);
    expect(pages.size).toBeGreaterThan(15);
    const CITATION = /.*(?:\bSPEC\b|§|\bSTYLE \d|\b[Ii]ssue \d).*/;
    const citing = [...pages].filter(([, page]) => CITATION.test(page)).map(([name, page]) => `${name}: ${CITATION.exec(page)![0].trim()}`);
    expect(citing).toEqual([]);
  });
});
