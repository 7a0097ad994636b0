import { exec } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, STACK_LINE } from '../helpers/run-cli.js';

// Every `node bin/toolchain.js …` command that the README and the pages under docs/ show is run
// here, as written, from the repository's folder — or, for a command shown for a person to adapt
// or to start in another folder, by the test named next to it. Commands written `toolchain …`
// are for an installed package against services of your own (a Redis at 10.0.0.5) and are not
// run. `node ../bin/toolchain.js …` commands are the getting-started project: they run in order
// in a new folder inside the repository. A command added to a page without a place here fails.

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : name.endsWith('.md') ? [relative(REPO, path).split(sep).join('/')] : [];
  });
}

const PAGES = ['README.md', ...markdownFiles(join(REPO, 'docs'))];
const TEXT = new Map(PAGES.map((page) => [page, readFileSync(join(REPO, page), 'utf8')]));
const README = TEXT.get('README.md')!;
const COMMAND = /(?:^|`|\$ |&& )((?:[A-Z_]+=\S+ )?node (?:\.\.\/)?bin\/toolchain\.js [^`\n#]*?)\s*(?:`|#|$)/gm;

/** Each command, in the order the pages show them, with the pages that show it. */
const commands = new Map<string, string[]>();
for (const [page, text] of TEXT) {
  for (const m of text.matchAll(COMMAND)) {
    const command = m[1]!.trim();
    commands.set(command, [...(commands.get(command) ?? []), page]);
  }
}

/** Shown for a person to adapt or start in their own folder; each is exercised elsewhere. */
const ELSEWHERE: Record<string, string> = {
  'node bin/toolchain.js <command>': 'the command table below it',
  'node bin/toolchain.js …': 'a placeholder for any command',
  'node ../bin/toolchain.js watch': 'test/cli/project.test.ts (watch)',
  'node bin/toolchain.js mcp': 'test/llm/mcp.test.ts (an MCP client driving it)',
  'node bin/toolchain.js serve': 'test/serve/live.test.ts (serve as a process until SIGTERM)',
  'node bin/toolchain.js serve --approve write_file --verbose': 'test/serve/live.test.ts and test/serve/api.test.ts (approval, logs)',
  'node bin/toolchain.js runs show RUN_ID': 'test/cli/runs.test.ts (show a run), and the quick start below',
  'node bin/toolchain.js resume RUN_ID': 'test/cli/runs.test.ts (resume, redrive)',
  'node bin/toolchain.js runs cancel RUN_ID': 'test/cli/runs.test.ts (cancel from another process)',
  'node bin/toolchain.js runs prune --older-than 30d': 'test/cli/runs.test.ts (prune)',
  'node bin/toolchain.js rerun RUN_ID --from STEP --input k=v': 'test/cli/rerun.test.ts (a re-run from a step, with an input replaced)',
  "node bin/toolchain.js rerun 3f2c… --from render --input template='{{ $.city }} at noon'": 'test/cli/rerun.test.ts (--input read as JSON or as text)',
  'node bin/toolchain.js rerun 3f2c…': 'test/cli/rerun.test.ts (a re-run of every step)',
  'node bin/toolchain.js run city_time --input question=Osaka': "the README's chain, below (saved in a chains folder of its own)",
};

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function sh(command: string, cwd = REPO): Promise<Outcome> {
  return new Promise((resolve) => {
    exec(command, { cwd, timeout: 30_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, stdout, stderr }),
    );
  });
}

/** The line a page shows right after `$ COMMAND` (its output), if it shows one. */
function shownOutput(command: string): string | undefined {
  for (const text of TEXT.values()) {
    const at = text.indexOf(`$ ${command}\n`);
    if (at >= 0) return text.slice(at).split('\n')[1]!.replace(/…$/, '');
  }
  return undefined;
}

/** Commands whose stdout is JSON by contract: a run's outputs, definitions, `--json`. */
const printsJson = (command: string): boolean => / --json\b/.test(command) || /toolchain\.js (run|resume) (?!--help)/.test(command) || / tools export /.test(command);

let server: Server;
let port = 0;
let project: string;
beforeAll(async () => {
  // fetch_and_extract's example URL, on a free port instead of the one the page shows.
  server = createServer((_req, res) => res.end('<html><head><title>Hello from the docs</title></head></html>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  // The getting-started project, in a folder inside the repository so that `../bin` is ours.
  project = mkdtempSync(join(REPO, '.tmp-docs-project-'));
});
afterAll(async () => {
  rmSync(project, { recursive: true, force: true });
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the commands in the README and docs/', () => {
  it('finds them', () => {
    expect(commands.size).toBeGreaterThan(25);
    expect([...commands.keys()].filter((c) => c.includes('../bin/')).length).toBeGreaterThan(2);
  });

  it('each command listed as run elsewhere is still shown', () => {
    expect(Object.keys(ELSEWHERE).filter((c) => !commands.has(c))).toEqual([]);
  });

  for (const [command, pages] of commands) {
    if (ELSEWHERE[command] || command.includes('../bin/')) continue;
    it(`${command}  (${[...new Set(pages)].join(', ')})`, async () => {
      const { code, stdout, stderr } = await sh(command.replaceAll('127.0.0.1:8765', `127.0.0.1:${port}`));
      expect(stderr).not.toMatch(STACK_LINE);
      const shown = shownOutput(command);
      if (shown !== undefined) {
        expect(stdout.startsWith(shown), stdout).toBe(true);
        // A diagnostic line is what `validate` prints for an invalid file, with exit code 2.
        expect(code, stderr).toBe(/^\S+:\d+:\d+ [A-Z_]+ /.test(shown) ? 2 : 0);
        return;
      }
      expect(code, stderr).toBe(0);
      if (printsJson(command)) expect(() => JSON.parse(stdout) as unknown).not.toThrow();
      if (command.includes('fetch_and_extract')) expect(stdout).toContain('Hello from the docs');
    });
  }

  it('the getting-started project: init, then each command in the order shown', async () => {
    const steps = [...commands.keys()].filter((c) => c.includes('../bin/') && !ELSEWHERE[c]);
    expect(steps[0]).toBe('node ../bin/toolchain.js init');
    for (const command of steps) {
      const { code, stdout, stderr } = await sh(command, project);
      expect(stderr, command).not.toMatch(STACK_LINE);
      expect(code, `${command}: ${stderr}`).toBe(0);
      if (command.includes(' run ')) expect(JSON.parse(stdout)).toMatchObject({ text: 'Hello, Ada! / Bonjour, Ada!' });
    }
  });
});

describe('the quick start', () => {
  const block = README.slice(README.indexOf('## Quick start'));
  const first = /```sh\n(.+)\n/.exec(block)![1]!;

  it('is the command CI runs, then `npm test`', () => {
    expect(first).toBe('npm ci && npm run build && node bin/toolchain.js run city_brief --input question="What time is it in Osaka?"');
    // `npm test`, with what it needs said beside it.
    expect(/```sh\n.+\n(.+)\n```/.exec(block)![1]).toMatch(/^npm test(\s+#.*PostgreSQL.*Redis.*)?$/);
  });

  it('prints the answer the README shows', async () => {
    const { code, stdout } = await sh(first.slice(first.indexOf('node bin/toolchain.js')));
    expect(code).toBe(0);
    const shown = /"text": "Osaka, Japan: \d\d:\d\d \(Asia\/Tokyo\), population [\d,]+"/;
    expect(README).toMatch(shown);
    expect(stdout).toMatch(shown);
  });

  it('records the run, so that `runs` lists it and `runs show` shows it', async () => {
    const { code, stderr } = await sh(first.slice(first.indexOf('node bin/toolchain.js')));
    expect(code).toBe(0);
    const id = /^run (\S+)$/m.exec(stderr)![1]!;
    const listed = await sh('node bin/toolchain.js runs --json --chain city_brief');
    expect((JSON.parse(listed.stdout) as { run_id: string; status: string }[]).find((r) => r.run_id === id)).toMatchObject({ status: 'succeeded' });
    const shown = await sh(`node bin/toolchain.js runs show ${id} --json`);
    expect(JSON.parse(shown.stdout)).toMatchObject({ run_id: id, chain: 'city_brief', status: 'succeeded' });
  });
});

describe("the README's chain", () => {
  it('validates against the shipped plugins and runs as the README says', async () => {
    const section = README.slice(README.indexOf('## A chain'));
    const yaml = /```yaml\n([\s\S]+?)```/.exec(section)![1]!;
    const dir = mkdtempSync(join(tmpdir(), 'toolchain-readme-chain-'));
    try {
      mkdirSync(join(dir, 'chains'));
      writeFileSync(join(dir, 'chains', 'city_time.yaml'), yaml);
      const checked = await sh(`node bin/toolchain.js --chains ${dir}/chains validate`);
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
      const command = [...commands.keys()].find((c) => c.includes('run city_time'))!;
      const ran = await sh(`${command.replace('node bin/toolchain.js', `node bin/toolchain.js --chains ${dir}/chains`)} --store memory:`);
      expect(ran.code, ran.stderr).toBe(0);
      expect(JSON.parse(ran.stdout)).toMatchObject({ text: expect.stringMatching(/^Osaka: \d\d:\d\d, population \d+$/) as unknown });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
