import type { Logger } from 'pino';
import { lazyPackage } from '../common/lazy-package.js';
import { requireOptional } from '../common/optional-package.js';

const pinoPackage = lazyPackage<typeof import('pino')>('pino');
const prettyPackage = lazyPackage<typeof import('pino-pretty')>('pino-pretty');
const pretty = (): typeof import('pino-pretty') => requireOptional('pino-pretty', prettyPackage);
import { createBatchedDestination } from './batched-destination.js';

// The logger of `toolchain serve`: JSON lines (one per event) on the given stream, written once
// per event-loop turn (batched-destination.ts); with
// `--verbose` on a terminal, pino-pretty's coloured lines instead, in this process (no worker
// thread, which a bundled CLI could not start by module name).

export interface CliLoggerOptions {
  readonly stream: NodeJS.WritableStream & { isTTY?: boolean };
  readonly verbose: boolean;
  /** Default 'info' ('debug' with --verbose). */
  readonly level?: string;
}

export function createCliLogger(options: CliLoggerOptions): Logger {
  const level = options.level ?? (options.verbose ? 'debug' : 'info');
  if (options.verbose && options.stream.isTTY) {
    return pinoPackage().pino({ level }, pretty().PinoPretty({ colorize: true, destination: options.stream, ignore: 'pid,hostname,event', translateTime: 'HH:MM:ss.l', messageFormat: '{if event}{event} {end}{if step}{step} {end}{msg}' }));
  }
  const stream = options.stream;
  return pinoPackage().pino({ level, base: undefined }, createBatchedDestination((chunk) => void stream.write(chunk)));
}
