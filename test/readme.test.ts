import { exec } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, STACK_LINE } from './helpers/run-cli.js';

// Every `node bin/toolchain.js …` command the README shows is run here, as written, or by the
// test named next to it. A command added to the README without a place in this list fails.

const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const COMMAND = /(?:^|`|\$ |&& )((?:[A-Z_]+=\S+ )?node (?:\.\.\/)?bin\/toolchain\.js [^`\n#]*?)\s*(?:`|#|$)/gm;
const commands = [...new Set([...README.matchAll(COMMAND)].map((m) => m[1]!.trim()))];

/** Shown for a person to adapt or start in their own folder; each is exercised elsewhere. */
const ELSEWHERE: Record<string, string> = {
  'node ../bin/toolchain.js init': 'test/cli-project.test.ts (init in a new folder, then validate and run)',
  'node ../bin/toolchain.js run hello --input name=Ada': 'test/cli-project.test.ts (the starter chain)',
  'node ../bin/toolchain.js watch': 'test/cli-project.test.ts (watch)',
  'node bin/toolchain.js list tools': 'test/cli-project.test.ts (list)',
  'node bin/toolchain.js <command>': 'the command table below it',
  'node bin/toolchain.js mcp': 'test/llm-mcp.test.ts (an MCP client driving it)',
  'node bin/toolchain.js serve': 'test/serve-live.test.ts (serve as a process until SIGTERM)',
  'node bin/toolchain.js serve --approve write_file --verbose': 'test/serve-live.test.ts and test/serve-api.test.ts (approval, logs)',
  'node bin/toolchain.js runs': 'test/cli-runs.test.ts (list the runs of a store)',
  'node bin/toolchain.js runs show RUN_ID': 'test/cli-runs.test.ts (show a run)',
  'node bin/toolchain.js resume RUN_ID': 'test/cli-runs.test.ts (resume, redrive)',
  'node bin/toolchain.js runs cancel RUN_ID': 'test/cli-runs.test.ts (cancel from another process)',
  'node bin/toolchain.js runs prune --older-than 30d': 'test/cli-runs.test.ts (prune)',
};

function sh(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    exec(command, { cwd: REPO, timeout: 30_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, stdout, stderr }),
    );
  });
}

// fetch_and_extract's example URL names port 8765, which the reader may well be serving on (the
// README suggests it): the page is served on a free port, and the commands are run with that one.
const EXAMPLE_HOST = '127.0.0.1:8765';
let server: Server;
let host = EXAMPLE_HOST;
beforeAll(async () => {
  server = createServer((_req, res) => res.end('<html><head><title>Hello from the README</title></head></html>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the commands in the README', () => {
  it('finds them', () => {
    expect(commands.length).toBeGreaterThan(8);
  });

  for (const command of commands) {
    if (ELSEWHERE[command]) continue;
    it(command, async () => {
      const { code, stdout, stderr } = await sh(command.replaceAll(EXAMPLE_HOST, host));
      expect(stderr).not.toMatch(STACK_LINE);
      if (command.includes('test/fixtures/bad/')) {
        // The README shows this one's output.
        const shown = README.slice(README.indexOf(`$ ${command}`)).split('\n')[1]!.replace(/…$/, '');
        expect(stdout.startsWith(shown)).toBe(true);
        expect(code).toBe(2);
        return;
      }
      expect(code, stderr).toBe(0);
      expect(() => JSON.parse(stdout) as unknown).not.toThrow();
    });
  }
});

describe('the quick start', () => {
  it('prints the answer the README shows', async () => {
    const block = README.slice(README.indexOf('## Quick start'));
    const first = /```sh\n(.+)\n/.exec(block)![1]!;
    const run = first.slice(first.indexOf('node bin/toolchain.js'));
    const { code, stdout } = await sh(run);
    expect(code).toBe(0);
    const shown = /"text": "Osaka, Japan: \d\d:\d\d \(Asia\/Tokyo\), population [\d,]+"/;
    expect(README).toMatch(shown);
    expect(stdout).toMatch(shown);
  });

  it('records the run, so that `runs` lists it and `runs show` shows it', async () => {
    const block = README.slice(README.indexOf('## Quick start'));
    const first = /```sh\n(.+)\n/.exec(block)![1]!;
    const { code, stderr } = await sh(first.slice(first.indexOf('node bin/toolchain.js')));
    expect(code).toBe(0);
    const id = /^run (\S+)$/m.exec(stderr)![1]!;
    const listed = await sh('node bin/toolchain.js runs --json --chain city_brief');
    expect((JSON.parse(listed.stdout) as { run_id: string; status: string }[]).find((r) => r.run_id === id)).toMatchObject({ status: 'succeeded' });
    const shown = await sh(`node bin/toolchain.js runs show ${id} --json`);
    expect(JSON.parse(shown.stdout)).toMatchObject({ run_id: id, chain: 'city_brief', status: 'succeeded' });
  });
});
