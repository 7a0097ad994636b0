import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFiles } from '../fixtures/plugins/helpers.js';
import { runCli } from '../helpers/run-cli.js';

// Two plugins with the same tool name got no warning, although docs/guide/plugins.md
// promised one: the second plugin's tool silently lost its bare name. `validate` (and `list
// plugins`) now say so, at the second plugin's tool name.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolchain-collide-'));
  await writeFiles(dir, {
    'plugins/alpha/plugin.yaml': 'name: alpha\nversion: 1.0.0\ntools:\n  - name: shout\n',
    'plugins/alpha/tools/shout.js': 'export default () => "alpha";\n',
    'plugins/beta/plugin.yaml': 'name: beta\nversion: 1.0.0\ntools:\n  - name: other\n  - name: shout\n',
    'plugins/beta/tools/shout.js': 'export default () => "beta";\n',
    'plugins/beta/tools/other.js': 'export default () => 1;\n',
    'chains/c.yaml': 'name: c\nsteps:\n  - name: s\n    tool: shout\n',
  });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('two plugins with one tool name', () => {
  it('validate warns at the second plugin\'s tool, names both and the qualified name, and still passes', async () => {
    const out = await runCli(['validate'], { cwd: dir });
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(
      "plugins/beta/plugin.yaml:5:11 NAME_COLLISION tool 'shout' is also provided by plugin 'alpha', which comes first and keeps the name 'shout'; call this one 'beta/shout'",
    );
  });

  it('run uses the first plugin\'s tool for the bare name', async () => {
    const out = await runCli(['run', 'c'], { cwd: dir });
    expect(out.stdout.trim()).toBe('"alpha"');
  });
});
