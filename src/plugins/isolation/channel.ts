import { fork, type ChildProcess } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { FromWorker, ToWorker } from './protocol.js';

// One worker of an isolated plugin, thread or child process, behind one small interface: send a
// message, hear its messages, its output and its end, hold the engine's process open (only while
// it runs a call), and terminate it. The far side is worker-main.ts.

export type WorkerKind = 'worker' | 'process';

export interface ChannelEvents {
  message(message: FromWorker): void;
  /** Bytes it wrote below the JavaScript streams (a child process's own fd 1 and 2). */
  output(stream: 'stdout' | 'stderr', text: string): void;
  /** It ended: how, in words (`exit code 3`, `signal SIGKILL`, or the error that ended it). */
  exit(how: string): void;
}

export interface Channel {
  post(message: ToWorker): void;
  ref(): void;
  unref(): void;
  terminate(): void;
}

export interface ChannelSettings {
  readonly kind: WorkerKind;
  /** The compiled worker-main.js. */
  readonly entry: string;
  readonly memoryMb: number;
  /** The engine's disk cache folder: workers read transformed modules from it instead of loading sucrase. */
  readonly cacheDir?: string;
  /** The worker's whole environment (worker-env.ts): a thread's own process.env, a child's env. */
  readonly env: Readonly<Record<string, string>>;
}

function pipe(stream: Readable | null | undefined, name: 'stdout' | 'stderr', events: ChannelEvents): void {
  stream?.setEncoding('utf8');
  stream?.on('data', (text: string) => events.output(name, text));
}

export function openChannel(settings: ChannelSettings, events: ChannelEvents): Channel {
  return settings.kind === 'worker' ? openThread(settings, events) : openProcess(settings, events);
}

function openThread(settings: ChannelSettings, events: ChannelEvents): Channel {
  const worker = new Worker(settings.entry, {
    // Its own heap, bounded; its stdout and stderr are ours to read (the worker sends what
    // handlers write as messages; these catch anything else).
    resourceLimits: { maxOldGenerationSizeMb: settings.memoryMb, maxYoungGenerationSizeMb: Math.min(64, Math.max(4, settings.memoryMb >> 3)) },
    stdout: true,
    stderr: true,
    execArgv: [],
    // A copy of its own instead of the engine's process.env, which a thread shares by default.
    env: { ...settings.env },
    workerData: { cacheDir: settings.cacheDir },
  });
  let ended: string | undefined;
  worker.on('message', (m: FromWorker) => events.message(m));
  worker.on('error', (error: Error & { code?: string }) => {
    ended ??= error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `it ran out of memory (limit ${settings.memoryMb} MiB)` : error.message;
  });
  worker.on('exit', (code) => events.exit(ended ?? `it exited with code ${code}`));
  pipe(worker.stdout, 'stdout', events);
  pipe(worker.stderr, 'stderr', events);
  return {
    post: (m) => worker.postMessage(m),
    ref: () => worker.ref(),
    unref: () => worker.unref(),
    terminate: () => void worker.terminate(),
  };
}

function openProcess(settings: ChannelSettings, events: ChannelEvents): Channel {
  const child: ChildProcess = fork(settings.entry, settings.cacheDir !== undefined ? [settings.cacheDir] : [], {
    serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    execArgv: [`--max-old-space-size=${settings.memoryMb}`],
    env: { ...settings.env },
  });
  child.on('message', (m) => events.message(m as FromWorker));
  let spawnError: string | undefined;
  child.on('error', (error) => {
    spawnError ??= error.message;
  });
  child.on('exit', (code, signal) => events.exit(spawnError ?? (signal ? `it was ended by ${signal}` : `it exited with code ${code}`)));
  pipe(child.stdout, 'stdout', events);
  pipe(child.stderr, 'stderr', events);
  // Stream handles would keep the engine alive on their own: only the IPC channel decides.
  for (const stream of [child.stdout, child.stderr]) (stream as Socket | null)?.unref();
  return {
    post: (m) => {
      if (child.connected) child.send(m);
    },
    ref: () => {
      child.ref();
      child.channel?.ref();
    },
    unref: () => {
      child.unref();
      child.channel?.unref();
    },
    terminate: () => void child.kill('SIGKILL'),
  };
}
