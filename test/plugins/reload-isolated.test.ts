import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeDir, tempDir, waitFor, writeFiles } from '../fixtures/plugins/helpers.js';
import { REPO } from '../helpers/run-cli.js';

// A run keeps the tool versions it started with at every isolation level: `toolchain serve`
// (watching, isolated plugins by default) runs a five-step chain while the handler is edited on
// disk; the steps after the edit still run the old code, and a run started after the reload gets
// the new one. Workers started after the edit (the replaced version's were ended by the reload)
// read the version's own copy of its modules, not the files.

const handler = (version: string): string => `import { pause } from '../lib/pause.js';
export default async function tag({ prev, ms }) {
  await pause(ms);
  return { text: prev === '' ? '${version}' : prev + ':${version}' };
}
`;

const FIVE = ['s1', 's2', 's3', 's4', 's5']
  .map((name, i) => `  - { name: ${name}, tool: tag, input_map: { prev: ${i === 0 ? '""' : `$.s${i}.text`}, ms: $.ms } }`)
  .join('\n');

async function project(): Promise<string> {
  const root = await tempDir('toolchain-reload-isolated-');
  await writeFiles(root, {
    'chains/five.yaml': `name: five\ninputs:\n  ms: { type: integer }\nsteps:\n${FIVE}\noutputs:\n  text: $.s5.text\n`,
    'chains/probe.yaml': 'name: probe\nsteps:\n  - { name: s1, tool: tag, input_map: { prev: "", ms: 0 } }\noutputs:\n  text: $.s1.text\n',
    'plugins/ver/plugin.yaml': [
      'name: ver',
      'version: 1.0.0',
      'tools:',
      '  - name: tag',
      '    description: Appends its version to a text.',
      '    parameters: { type: object, properties: { prev: { type: string }, ms: { type: integer } }, required: [prev, ms] }',
      '',
    ].join('\n'),
    'plugins/ver/tools/tag.js': handler('v1'),
    'plugins/ver/lib/pause.js': 'export const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));\n',
  });
  return root;
}

async function serve(root: string, isolation: string): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  const child = spawn(process.execPath, [join(REPO, 'bin', 'toolchain.js'), 'serve', '--port', '0', '--isolation', isolation], { cwd: root, env: { ...process.env, TOOLCHAIN_TOKEN: '' } });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /inspector at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.on('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
  });
  return { child, url };
}

describe.each(['worker', 'process'])('toolchain serve --isolation %s, a handler edited mid-run', (isolation) => {
  let child: ChildProcessWithoutNullStreams | undefined;
  let root: string | undefined;
  afterEach(async () => {
    child?.kill('SIGKILL');
    if (root) await removeDir(root);
  });

  it('keeps the old code for the rest of the run; a run started after the reload gets the new code', async () => {
    root = await project();
    const server = await serve(root, isolation);
    child = server.child;
    const post = async (chain: string, input: unknown, wait: boolean): Promise<Record<string, unknown>> =>
      (await (await fetch(`${server.url}/api/runs${wait ? '?wait=true' : ''}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain, input }) })).json()) as Record<string, unknown>;
    const get = async (id: string): Promise<{ status: string; outputs: unknown; steps: Record<string, { status: string }> }> =>
      (await (await fetch(`${server.url}/api/runs/${id}`)).json()) as { status: string; outputs: unknown; steps: Record<string, { status: string }> };

    expect(await post('probe', {}, true)).toMatchObject({ status: 'succeeded', outputs: { text: 'v1' } });
    const { run_id } = (await post('five', { ms: 800 }, false)) as { run_id: string };
    await waitFor(async () => expect((await get(run_id)).steps.s1?.status).toBe('succeeded'), 10_000);
    await writeFile(join(root, 'plugins/ver/tools/tag.js'), handler('v2'));
    // The reload is in effect: a new run calls the new code ...
    await waitFor(async () => expect(await post('probe', {}, true)).toMatchObject({ outputs: { text: 'v2' } }), 10_000);
    // ... while the run that started before it has steps still to go.
    const during = await get(run_id);
    expect(during.status).toBe('running');
    expect(Object.values(during.steps).filter((s) => s.status === 'succeeded').length).toBeLessThan(5);
    const done = await waitFor(async () => {
      const run = await get(run_id);
      expect(run.status).not.toBe('running');
      return run;
    }, 15_000);
    expect(done).toMatchObject({ status: 'succeeded', outputs: { text: 'v1:v1:v1:v1:v1' } });
  }, 40_000);
});
