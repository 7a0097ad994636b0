import { describe, expect, it } from 'vitest';
import runCommand from '../../plugins/shell/tools/run_command.js';
import { context } from './helpers.js';
import { isAlive as alive } from '../helpers/processes.js';

// Run_command left grandchildren running: a program that started something in
// the background and exited returned its result while the background process lived on. Its whole
// process group is ended now, when it exits and when it is stopped.

async function gone(pid: number): Promise<boolean> {
  // Signals are delivered asynchronously: look for up to five seconds.
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

const env = () => context({ TOOLCHAIN_FILES_ROOT: process.cwd(), PATH: process.env.PATH });

describe('run_command ends its whole process group', () => {
  it('a background grandchild of a program that exited is stopped', async () => {
    const result = await runCommand({ command: 'sh', args: ['-c', 'sleep 60 & echo $!'] }, env());
    expect(result.exit_code).toBe(0);
    const pid = Number(result.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    expect(await gone(pid)).toBe(true);
  });

  it('a grandchild is stopped with its parent at the timeout', async () => {
    const result = await runCommand({ command: 'sh', args: ['-c', 'sleep 60 & echo $!; sleep 60'], timeout_ms: 300 }, env());
    expect(result.timed_out).toBe(true);
    expect(await gone(Number(result.stdout.trim()))).toBe(true);
  });

  it('a grandchild that ignores SIGTERM is killed', async () => {
    const result = await runCommand({ command: 'sh', args: ['-c', "(trap '' TERM; sleep 60) & echo $!"] }, env());
    expect(await gone(Number(result.stdout.trim()))).toBe(true);
  });
});
