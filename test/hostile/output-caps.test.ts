import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, createRegistry, type Engine } from '../../src/index.js';
import { removeDir, tempDir } from '../fixtures/plugins/helpers.js';
import { REPO } from '../helpers/run-cli.js';

// A shipped tool whose own limit lets it return as much as the engine's result
// limit (1 MiB of JSON) — read_file's max_bytes, run_command's max_output_bytes, http_request's
// max_bytes, render_template's output — failed with RESULT_TOO_LARGE right at its cap, since the
// JSON around the text makes it larger. Those tools now declare `truncate: true`: the result comes
// back cut and marked `truncated: true`, and the cut takes the big member, keeping the small ones.

const MIB = 1024 * 1024;
let dir: string;
let engine: Engine;

beforeAll(async () => {
  dir = await tempDir('toolchain-caps-');
  await writeFile(join(dir, 'full.txt'), 'a'.repeat(MIB));
  await writeFile(join(dir, 'lines.txt'), 'abc\n'.repeat(MIB / 4));
  const registry = createRegistry({ env: { ...process.env, TOOLCHAIN_FILES_ROOT: dir } });
  engine = await createEngine({ pluginsDir: join(REPO, 'plugins'), registry, cache: 'off' });
  engine.addChain('name: read\ninputs: { path: string }\nsteps:\n  - name: r\n    tool: read_file\n    input_map: { path: $.path }\n');
  engine.addChain('name: command\ninputs: { script: string }\nsteps:\n  - name: c\n    tool: run_command\n    input_map: { command: node, args: ["-e", $.script] }\n');
});
afterAll(async () => {
  await engine.close();
  await removeDir(dir);
});

interface Truncated<T> {
  truncated: true;
  original_bytes: number;
  value: T;
}

describe('outputs at a tool\'s own byte cap', () => {
  it('read_file of a file of exactly max_bytes (1 MiB) returns the text cut and marked, with path and size kept', async () => {
    for (const path of ['full.txt', 'lines.txt']) {
      const result = await engine.run('read', { path });
      expect(result.status).toBe('succeeded');
      const out = result.outputs as Truncated<{ path: string; text: string; bytes: number }>;
      expect(out).toMatchObject({ truncated: true, value: { path, bytes: MIB } });
      expect(out.original_bytes).toBeGreaterThan(MIB);
      expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(MIB);
      // A newline takes two bytes of JSON: four fifths of the lines file fit.
      expect(out.value.text.length).toBeGreaterThan(path === 'full.txt' ? MIB - 200 : MIB * 0.79);
      expect((path === 'full.txt' ? 'a'.repeat(MIB) : 'abc\n'.repeat(MIB / 4)).startsWith(out.value.text)).toBe(true);
    }
  });

  it('run_command whose output reaches max_output_bytes keeps exit code, stderr and flags; stdout is cut', async () => {
    const result = await engine.run('command', { script: 'process.stderr.write("warn\\n"); process.stdout.write("x".repeat(3 * 1024 * 1024))' }, { approve: () => true });
    expect(result.status).toBe('succeeded');
    const out = result.outputs as Truncated<Record<string, unknown>>;
    expect(out.truncated).toBe(true);
    expect(out.value).toMatchObject({ stderr: 'warn\n', timed_out: false, output_truncated: true });
    expect(Object.keys(out.value)).toEqual(['exit_code', 'signal', 'stdout', 'stderr', 'timed_out', 'output_truncated', 'elapsed_ms']);
    expect((out.value.stdout as string).length).toBeGreaterThan(MIB - 1024 - 200);
  });

  it('a small result is not wrapped', async () => {
    const result = await engine.run('command', { script: 'process.stdout.write("hi")' }, { approve: () => true });
    expect(result.outputs).toMatchObject({ stdout: 'hi', exit_code: 0 });
  });
});
