import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './run-cli.js';

// `toolchain run …` under a parent that never reaps it (`sh` that execs `sleep`): once killed
// with SIGKILL the process stays a zombie — dead, but its process id still answers signal 0 —
// until the parent goes. How a run looks in the first moments after a kill -9, held open.

const BIN = join(REPO, 'bin', 'toolchain.js');

export interface HeldRun {
  /** The CLI's process id. */
  readonly pid: number;
  /** The run id it printed; resolves once it did. */
  readonly runId: Promise<string>;
  kill9(): void;
  /** The process state letter from /proc (Z: zombie). */
  state(): string;
  /** Ends the parent, which lets the zombie go. */
  release(): void;
}

export async function startHeldRun(args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<HeldRun> {
  const parent = spawn('sh', ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@" & echo "pid $!" >&2; exec sleep 120`, 'sh', ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  let gotPid!: (pid: number) => void;
  let gotRun!: (id: string) => void;
  const pid = new Promise<number>((resolve) => (gotPid = resolve));
  const runId = new Promise<string>((resolve) => (gotRun = resolve));
  parent.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    const p = /^pid (\d+)$/m.exec(err);
    if (p) gotPid(Number(p[1]));
    const r = /^run (\S+)$/m.exec(err);
    if (r) gotRun(r[1]!);
  });
  const cliPid = await pid;
  return {
    pid: cliPid,
    runId,
    kill9: () => process.kill(cliPid, 'SIGKILL'),
    state() {
      try {
        const stat = readFileSync(`/proc/${cliPid}/stat`, 'latin1');
        return stat.charAt(stat.lastIndexOf(')') + 2);
      } catch {
        return 'gone';
      }
    },
    release: () => void parent.kill('SIGKILL'),
  };
}
