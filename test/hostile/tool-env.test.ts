import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';

// Hostile input, round two: tools saw every secret of the engine. With `isolation: process` the
// child inherited the whole environment (model API keys, TOOLCHAIN_TOKEN) although ctx.env was
// empty; worker threads shared the engine's process.env. A worker's environment is now the
// manifest's `env:` list and what Node needs (PATH, HOME, temp folders, locale, CA certificates).

const SECRETS = { TOOLCHAIN_TOKEN: 'serve-token-secret', OPENAI_API_KEY: 'sk-secret', HOSTILE_LISTED: 'listed-value' };

describe.each(['worker', 'process'] as const)('isolation: %s', (level) => {
  let dir: string;
  let engine: Engine;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    for (const [k, v] of Object.entries(SECRETS)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    dir = await tempDir('toolchain-tool-env-');
    await writeFiles(dir, {
      'plugins/peek/plugin.yaml': `name: peek\nversion: 1.0.0\nisolation: ${level}\nenv: [HOSTILE_LISTED]\ntools:\n  - name: peek\n    handler: tools/peek.js\n`,
      'plugins/peek/tools/peek.js': 'export default (_args, ctx) => ({ names: Object.keys(process.env).sort(), values: Object.values(process.env), ctx: ctx.env });\n',
    });
    engine = await createEngine({ pluginsDir: `${dir}/plugins`, cache: 'off' });
    engine.addChain('name: look\nsteps:\n  - name: p\n    tool: peek\noutputs: { seen: $.p }\n');
  });
  afterAll(async () => {
    await engine.close();
    await removeDir(dir);
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it("process.env in the handler holds the listed variables and Node's essentials, no secret", async () => {
    const result = await engine.run('look');
    expect(result.status).toBe('succeeded');
    const seen = (result.outputs as { seen: { names: string[]; values: string[]; ctx: Record<string, string> } }).seen;
    expect(seen.names).toContain('HOSTILE_LISTED');
    expect(seen.names).not.toContain('TOOLCHAIN_TOKEN');
    expect(seen.names).not.toContain('OPENAI_API_KEY');
    expect(seen.values).not.toContain('serve-token-secret');
    expect(seen.values).not.toContain('sk-secret');
    if (process.env.PATH !== undefined) expect(seen.names).toContain('PATH');
    const allowed = new Set(['HOSTILE_LISTED', 'PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'SystemRoot', 'windir']);
    expect(seen.names.filter((n) => !allowed.has(n))).toEqual([]);
    expect(seen.ctx).toEqual({ HOSTILE_LISTED: 'listed-value' });
  });
});
