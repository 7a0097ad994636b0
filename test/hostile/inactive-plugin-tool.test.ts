import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { writeFiles } from '../fixtures/plugins/helpers.js';
import { runCli } from '../helpers/run-cli.js';

// A tool from a plugin made inactive by an unmet `requires` gave
// "TOOL_NOT_FOUND … closest: add, flaky, sleep", with no word of the plugin. On hot reload, the
// plugin stays inactive "with an error that says why"; the run's error now says it too.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolchain-inactive-'));
  await writeFiles(dir, {
    'plugins/needy/plugin.yaml': 'name: needy\nversion: 1.0.0\nrequires: [missing >= 1.0.0]\ntools:\n  - name: lonely\n',
    'plugins/needy/tools/lonely.js': 'export default () => 1;\n',
    'plugins/fine/plugin.yaml': 'name: fine\nversion: 1.0.0\ntools:\n  - name: add\n',
    'plugins/fine/tools/add.js': 'export default () => 2;\n',
    'chains/uses_lonely.yaml': 'name: uses_lonely\nsteps:\n  - name: s\n    tool: lonely\n',
    'chains/uses_qualified.yaml': 'name: uses_qualified\nsteps:\n  - name: s\n    tool: needy/lonely\n',
  });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('TOOL_NOT_FOUND for a tool of an inactive plugin', () => {
  it('names the plugin and the requirement it is missing, by bare and by qualified name', async () => {
    const engine = await createEngine({ chainsDir: join(dir, 'chains'), pluginsDir: join(dir, 'plugins') });
    try {
      for (const chain of ['uses_lonely', 'uses_qualified']) {
        const result = await engine.run(chain, {});
        expect(result.error?.code, chain).toBe('TOOL_NOT_FOUND');
        expect(result.error?.message, chain).toContain("plugin 'needy' provides it but is inactive");
        expect(result.error?.message, chain).toContain("requires 'missing >= 1.0.0'");
      }
    } finally {
      await engine.close();
    }
  });

  it('the CLI prints it on one line and exits 2', async () => {
    const out = await runCli(['run', 'uses_lonely'], { cwd: dir });
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split('\n').filter((l) => !l.startsWith('run '))).toHaveLength(1);
    expect(out.stderr).toContain("unknown tool 'lonely'; plugin 'needy' provides it but is inactive: plugin 'needy' requires 'missing >= 1.0.0'");
  });
});
