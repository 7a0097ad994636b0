import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { startServe } from '../helpers/serve-cli.js';

// `toolchain serve` from bin/ as a user starts it: what it logs about plugins that fail to load,
// and which arguments it refuses before it loads anything.

const root = mkdtempSync(join(tmpdir(), 'toolchain-serve-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A project folder with a plugin whose handler does not parse, and one whose module leaves a mark when it is evaluated. */
function project(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'plugins', 'broken', 'tools'), { recursive: true });
  mkdirSync(join(dir, 'plugins', 'marker', 'tools'), { recursive: true });
  mkdirSync(join(dir, 'chains'));
  writeFileSync(join(dir, 'plugins', 'broken', 'plugin.yaml'), 'name: broken\nversion: 1.0.0\ntools:\n  - name: t\n    handler: tools/t.js\n    parameters: { type: object }\n');
  writeFileSync(join(dir, 'plugins', 'broken', 'tools', 't.js'), 'export default function ( {\n');
  writeFileSync(join(dir, 'plugins', 'marker', 'plugin.yaml'), 'name: marker\nversion: 1.0.0\ntools:\n  - name: m\n    handler: tools/m.js\n    parameters: { type: object }\n');
  writeFileSync(join(dir, 'plugins', 'marker', 'tools', 'm.js'), "import { writeFileSync } from 'node:fs';\nwriteFileSync(new URL('../../../loaded.txt', import.meta.url), 'x');\nexport default () => ({});\n");
  return dir;
}

interface LogLine {
  readonly level: number;
  readonly event?: string;
  readonly plugin?: string;
  readonly code?: string;
  readonly file?: string;
  readonly line?: number;
  readonly col?: number;
  readonly msg: string;
}

const logLines = (stdout: string): LogLine[] => stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);

describe('toolchain serve', () => {
  it('logs a plugin that fails to load at error level, with each problem\'s file, line, column and code', async () => {
    const dir = project('log');
    const serve = await startServe({ cwd: dir, args: ['--no-watch', '--grace', '10s'] });
    expect(await serve.stop()).toBe(0);
    const lines = logLines(serve.stdout());
    expect(lines.find((l) => l.event === 'plugin:loaded' && l.plugin === 'broken')).toMatchObject({ level: 50 });
    const problem = lines.find((l) => l.event === 'diagnostic');
    expect(problem).toMatchObject({ level: 50, plugin: 'broken', code: 'HANDLER_LOAD', file: join('plugins', 'broken', 'plugin.yaml'), line: 5, col: 14 });
    expect(problem!.msg).toMatch(/^plugins\/broken\/plugin\.yaml:5:14 HANDLER_LOAD tool 't'/);
    // The plugin that loads is an info line.
    expect(lines.find((l) => l.event === 'plugin:loaded' && l.plugin === 'marker')).toMatchObject({ level: 30 });
    // --grace takes the duration syntax of chain files and of `worker --grace`.
    expect(serve.stderr()).toContain('runs have 10.0s');
  }, 30_000);

  it('takes --grace as a duration (500ms, 10s, 1.5m, or a bare number of seconds) and names the form it wants', async () => {
    const dir = project('grace');
    const bad = await runCli(['serve', '--port', '0', '--grace', '10 parsecs'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--grace must be a duration such as 500ms, 10s, 1\.5m or 1h.*got '10 parsecs'/);
    for (const grace of ['1.5m', '250ms', '7']) {
      const serve = await startServe({ cwd: dir, args: ['--no-watch', '--grace', grace] });
      expect(await serve.stop()).toBe(0);
      expect(serve.stderr()).toContain(`runs have ${{ '1.5m': '1.5m', '250ms': '250ms', '7': '7.0s' }[grace]}`);
    }
  }, 30_000);

  it('refuses a host other than loopback without a token before it loads any plugin', async () => {
    const dir = project('host');
    const refused = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('USAGE refusing to listen on 0.0.0.0 without a token');
    expect(refused.stdout).toBe('');
    expect(refused.stderr).not.toContain('HANDLER_LOAD');
    expect(existsSync(join(dir, 'loaded.txt'))).toBe(false);
  });
});
