import { sep } from 'node:path';
import { ExitAttempt } from '../common/exit-attempt.js';

// Plugin code that runs in this thread (isolation: none) must not end the process that serves it.
// While a command that runs plugin code is at work (`run`, `mcp`, `serve`): `process.exit` throws
// an ExitAttempt instead of exiting (a tool call that does it fails with TOOL_CRASHED, naming the
// tool), and an exception or rejection nobody caught — a handler's timer that throws after the
// call returned, say — is logged with the plugin named (found in its stack) instead of killing the
// process. Returns what puts everything back.

export interface GuardOptions {
  /** The plugins folder: a stack frame under it names the plugin. */
  readonly pluginsDir: string;
  /** Where the one-line report of each uncaught error goes (stderr, or the server's log). */
  readonly report: (line: string) => void;
}

export function guardProcess(options: GuardOptions): () => void {
  const exit = process.exit;
  process.exit = ((code?: number | string | null) => {
    throw new ExitAttempt(code);
  }) as typeof process.exit;
  const onException = (error: unknown): void => options.report(describe(error, 'exception', options.pluginsDir));
  const onRejection = (reason: unknown): void => options.report(describe(reason, 'rejection', options.pluginsDir));
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.exit = exit;
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}

/** The plugin whose file appears first in the error's stack, if any. */
export function pluginInStack(error: unknown, pluginsDir: string): string | undefined {
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : '';
  const prefix = pluginsDir.endsWith(sep) ? pluginsDir : pluginsDir + sep;
  const at = stack.indexOf(prefix);
  if (at < 0) return undefined;
  const rest = stack.slice(at + prefix.length);
  const name = rest.slice(0, rest.search(/[\\/]/));
  return name === '' ? undefined : name;
}

function describe(error: unknown, kind: 'exception' | 'rejection', pluginsDir: string): string {
  const plugin = pluginInStack(error, pluginsDir);
  const from = plugin !== undefined ? `plugin '${plugin}'` : 'code that names no plugin in its stack';
  if (error instanceof ExitAttempt) return `${from} called ${error.message.replace(' was called', '')} outside of a tool call; ignored, the process carries on`;
  let message: string;
  try {
    message = error instanceof Error ? error.message : String(error);
  } catch {
    message = 'an unreadable value';
  }
  const what = kind === 'exception' ? 'an uncaught exception' : 'an unhandled rejection';
  return `${what} from ${from}: ${message.split('\n')[0]}; ignored, the process carries on`;
}
