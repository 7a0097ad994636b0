import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { openPinnedFolder } from '../../files/lib/pinned.js';
import { filesRoot, resolveInRoot } from '../../files/lib/root.js';
import { type ToolContext, toolError } from '../lib/tool-context.js';

// run_command (dangerous: every call needs approval): runs a program with an argument list —
// never through a shell, so nothing in `command` or `args` is interpreted (no pipes, globs,
// variables or `;`).
// - The working directory is `cwd`, relative to the files root and held to the files plugin's
//   rules (PATH_ESCAPE outside it). The checked folder is held open and the program starts in the
//   folder that descriptor names (pinned.ts), so a folder on the path swapped for a link between
//   the check and the start cannot send it elsewhere.
// - The child's environment is PATH, HOME and LANG as the engine sees them (the manifest's
//   `env`), plus `env` from the call: nothing else of the engine's environment leaks into it.
// - The program runs in its own process group (POSIX); when it exits, anything it left running
//   in the background is stopped too (a program that calls setsid() leaves the group and is not).
// - At timeout_ms the process gets SIGTERM, then SIGKILL two seconds later; the result says
//   timed_out. When stdout and stderr together pass max_output_bytes the process is killed the
//   same way and output_truncated is set. Cancelling the step kills it too.
// - A program that cannot be started fails with COMMAND_NOT_FOUND; a non-zero exit is a result
//   (exit_code), not an error.

interface Args {
  readonly command: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly stdin?: string;
  readonly timeout_ms?: number;
  readonly max_output_bytes?: number;
}

export interface CommandResult {
  /** null when the process was ended by a signal. */
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timed_out: boolean;
  readonly output_truncated: boolean;
  readonly elapsed_ms: number;
}

const INHERITED = ['PATH', 'HOME', 'LANG'] as const;
const KILL_GRACE_MS = 2000;

export default async function runCommand(args: Args, ctx?: ToolContext): Promise<CommandResult> {
  const { command, args: argv = [], cwd = '.', env = {}, stdin, timeout_ms = 30_000, max_output_bytes = 1024 * 1024 } = args;
  if (typeof command !== 'string' || command.trim() === '') throw toolError('BAD_ARGUMENT', 'command must be the name or path of a program, e.g. "ls"');
  if (!Array.isArray(argv) || argv.some((a) => typeof a !== 'string')) throw toolError('BAD_ARGUMENT', 'args must be an array of strings');
  if ([command, ...argv].some((a) => a.includes('\0'))) throw toolError('BAD_ARGUMENT', 'command and args must not contain NUL characters');
  const root = await filesRoot(ctx);
  const dir = await resolveInRoot(root, cwd);
  if (!dir.exists) throw toolError('NOT_FOUND', `the working directory "${dir.relative}" does not exist under the files root`);
  ctx?.signal.throwIfAborted();
  const folder = await openPinnedFolder(root, dir.absolute, dir.relative);

  const childEnv: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = ctx ? ctx.env[name] : process.env[name];
    if (value !== undefined) childEnv[name] = value;
  }
  Object.assign(childEnv, env);

  return new Promise<CommandResult>((resolve, reject) => {
    const started = performance.now();
    // Its own process group (POSIX), so stopping it also stops whatever it started.
    const group = process.platform !== 'win32';
    let child: ChildProcessWithoutNullStreams;
    try {
      // The child changes into the folder before it starts its program: the descriptor may go once spawn returned.
      child = spawn(command, [...argv], { cwd: folder.path, env: childEnv, shell: false, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, detached: group });
    } finally {
      void folder.close();
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    let truncated = false;
    let killTimer: NodeJS.Timeout | undefined;
    const signalAll = (signal: NodeJS.Signals): void => {
      try {
        if (group && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // already gone
      }
    };
    const stop = (): void => {
      if (killTimer) return;
      signalAll('SIGTERM');
      killTimer = setTimeout(() => signalAll('SIGKILL'), KILL_GRACE_MS);
    };
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      if (truncated) return;
      const room = max_output_bytes - size;
      if (chunk.length > room) {
        into.push(chunk.subarray(0, room));
        size = max_output_bytes;
        truncated = true;
        stop();
        return;
      }
      into.push(chunk);
      size += chunk.length;
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    child.stdin.on('error', () => undefined); // a program that exits without reading its input
    child.stdin.end(stdin ?? '');
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeout_ms);
    const onAbort = (): void => stop();
    ctx?.signal.addEventListener('abort', onAbort, { once: true });
    const cleanup = (): void => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      ctx?.signal.removeEventListener('abort', onAbort);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      cleanup();
      if (error.code === 'ENOENT') reject(toolError('COMMAND_NOT_FOUND', `cannot run "${command}": no such program (give a name on PATH or a path)`));
      else if (error.code === 'EACCES') reject(toolError('ACCESS_DENIED', `cannot run "${command}": permission denied`));
      else reject(toolError(error.code ?? 'COMMAND_FAILED', `cannot run "${command}": ${error.message}`));
    });
    // When the program ends, whatever it started in the background ends with it: its process
    // group gets SIGTERM, then SIGKILL (a leftover would otherwise outlive the run and hold the
    // pipes open, delaying 'close' for ever). A process group's id is not reused while any member
    // lives, so signalling it after the leader exited cannot hit a stranger.
    child.once('exit', () => {
      if (group) signalAll('SIGTERM');
      setTimeout(() => {
        if (group) signalAll('SIGKILL');
        child.stdout.destroy();
        child.stderr.destroy();
      }, 500).unref();
    });
    child.once('close', (code, signal) => {
      cleanup();
      if (ctx?.signal.aborted) {
        reject(ctx.signal.reason ?? toolError('ABORTED', 'cancelled'));
        return;
      }
      resolve({
        exit_code: code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timed_out: timedOut,
        output_truncated: truncated,
        elapsed_ms: Math.round(performance.now() - started),
      });
    });
  });
}
