import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';
import { REPO } from '../helpers/run-cli.js';

// What `npm test` needs, seen as a person running it sees it: a service that does not answer
// stops the run with one line naming it (not hundreds of failures and 30 s hook timeouts), and
// no test needs a fixed port that the reader may be using (the README's examples name 8765).

const VITEST = join(REPO, 'node_modules', 'vitest', 'vitest.mjs');

function vitest(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [VITEST, 'run', ...args], { cwd: REPO, env: { ...process.env, ...env, NO_COLOR: '1', FORCE_COLOR: '0' }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, out: stdout + stderr }),
    );
  });
}

describe('npm test', () => {
  it('stops at once with one line naming a service that does not answer', async () => {
    const port = await freePort();
    // An integration test: the unit project needs no services and does not ask for them.
    const { code, out } = await vitest(['test/cli/help.test.ts'], { TOOLCHAIN_TEST_REDIS: `redis://127.0.0.1:${port}` });
    expect(code).toBe(1);
    const lines = out.split('\n').filter((l) => l.trim() !== '' && !/^\s*RUN\s+v\d/.test(l));
    expect(lines).toEqual([`the tests need Redis at redis://127.0.0.1:${port}, which does not answer (ECONNREFUSED): start redis-server, or name another with TOOLCHAIN_TEST_REDIS`]);
  });

  it("runs the README's commands while port 8765, which its examples name, is taken", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => {
      taken.once('error', () => resolve()); // someone else has it: just as good
      taken.listen(8765, '127.0.0.1', resolve);
    });
    try {
      const { code, out } = await vitest(['test/docs/readme.test.ts', '-t', 'fetch_and_extract']);
      expect(out).toMatch(/Tests\s+1 passed/);
      expect(code, out).toBe(0);
    } finally {
      await new Promise<void>((resolve) => (taken.listening ? taken.close(() => resolve()) : resolve()));
    }
  }, 90_000);
});
