import { ToolchainError } from '../common/errors.js';
import { parseDuration } from '../expr/duration.js';

// What one client can hold of `toolchain serve`: sockets, the time a request may take to arrive,
// open event streams, runs in flight, the size of a request, and what one request can make the
// server do (the size of one answer's run values, the elements a run started over HTTP fans out to). The defaults are ones a laptop
// survives under a flood; each can be set with `serve --limit NAME=VALUE` or the
// TOOLCHAIN_SERVE_LIMITS variable (`NAME=VALUE,NAME=VALUE`), and by `createServer({ limits })`.

export interface ServeLimits {
  /** A request's headers must have arrived within this (slow-header clients are dropped with 408). */
  readonly headersTimeoutMs: number;
  /** A request's headers and body must have arrived within this. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** Open sockets at most; more are closed as they connect. */
  readonly maxConnections: number;
  /** Open event streams (`GET /api/runs/ID/events`) at most; more get 503 with Retry-After. */
  readonly maxEventStreams: number;
  /** Runs started over HTTP that have not finished, at most; more get 429 with Retry-After. */
  readonly maxRunsInFlight: number;
  /** A request body's bytes at most (413 BODY_TOO_LARGE). */
  readonly bodyBytes: number;
  /** The seconds a 429 or 503 tells the client to wait before it tries again. */
  readonly retryAfterS: number;
  /** A run value (input, outputs, a step's input or output) larger than this, as JSON, is left out of a run's view and its events, with a marker naming its route. */
  readonly valueBytes: number;
  /** The run values one answer (a run's view, one event stream) carries in all; past it, values are left out the same way. */
  readonly answerBytes: number;
  /** The elements one `for_each` of a run started over HTTP may have (FOR_EACH_TOO_LARGE past it). */
  readonly forEachElements: number;
}

export const DEFAULT_LIMITS: ServeLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 512,
  maxEventStreams: 256,
  maxRunsInFlight: 256,
  bodyBytes: 256 * 1024,
  retryAfterS: 5,
  valueBytes: 64 * 1024,
  answerBytes: 4 * 1024 * 1024,
  forEachElements: 10_000,
};

type Kind = 'duration' | 'count' | 'bytes';

/** The names `--limit` takes, the field each sets, and what its value is. */
const NAMES: Readonly<Record<string, readonly [keyof ServeLimits, Kind]>> = {
  'headers-timeout': ['headersTimeoutMs', 'duration'],
  'request-timeout': ['requestTimeoutMs', 'duration'],
  'keep-alive-timeout': ['keepAliveTimeoutMs', 'duration'],
  connections: ['maxConnections', 'count'],
  'event-streams': ['maxEventStreams', 'count'],
  'runs-in-flight': ['maxRunsInFlight', 'count'],
  'body-bytes': ['bodyBytes', 'bytes'],
  'retry-after': ['retryAfterS', 'count'],
  'value-bytes': ['valueBytes', 'bytes'],
  'answer-bytes': ['answerBytes', 'bytes'],
  'for-each-elements': ['forEachElements', 'count'],
};

export const LIMIT_NAMES: readonly string[] = Object.keys(NAMES);

const BYTES = /^(\d+)(|k|ki|kib|m|mi|mib)$/i;

function value(name: string, kind: Kind, text: string): number {
  const bad = (): never => {
    const what = kind === 'duration' ? 'a duration such as 10s or 500ms' : kind === 'bytes' ? 'a size such as 262144 or 256KiB' : 'a whole number of at least 1';
    throw new ToolchainError('USAGE', `--limit ${name} must be ${what}, got '${text}'`);
  };
  if (kind === 'duration') {
    const ms = parseDuration(text);
    return ms === undefined || ms < 1 ? bad() : Math.ceil(ms);
  }
  if (kind === 'count') return /^[1-9]\d{0,8}$/.test(text) ? Number(text) : bad();
  const m = BYTES.exec(text.trim());
  if (!m) return bad();
  const unit = m[2]!.toLowerCase();
  const n = Number(m[1]) * (unit.startsWith('m') ? 1024 * 1024 : unit.startsWith('k') ? 1024 : 1);
  return n >= 1 && n <= 64 * 1024 * 1024 ? n : bad();
}

/** The limits from `NAME=VALUE` entries (later ones win), over the defaults. */
export function parseLimits(entries: readonly string[]): ServeLimits {
  const limits: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const name = eq > 0 ? entry.slice(0, eq).trim() : entry.trim();
    const known = NAMES[name];
    if (known === undefined || eq < 0) {
      throw new ToolchainError('USAGE', `--limit takes NAME=VALUE with NAME one of ${LIMIT_NAMES.join(', ')}; got '${entry}'`);
    }
    limits[known[0]] = value(name, known[1], entry.slice(eq + 1).trim());
  }
  return checkLimits(limits as unknown as ServeLimits);
}

/** The limits as they are, or USAGE for a pair Node refuses: headers must be due no later than the whole request. */
export function checkLimits(limits: ServeLimits): ServeLimits {
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ToolchainError('USAGE', `the headers timeout (${limits.headersTimeoutMs} ms) must not be longer than the request timeout (${limits.requestTimeoutMs} ms): set --limit request-timeout too`);
  }
  return limits;
}

/** `TOOLCHAIN_SERVE_LIMITS` (comma-separated) then the `--limit` flags. */
export function limitsFrom(env: string | undefined, flags: readonly string[]): ServeLimits {
  const fromEnv = (env ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  return parseLimits([...fromEnv, ...flags]);
}

/** Node's HTTP server options for these limits (Fastify passes them to `http.createServer`). */
export function httpServerOptions(limits: ServeLimits): { headersTimeout: number; requestTimeout: number; keepAliveTimeout: number; connectionsCheckingInterval: number } {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks the two timeouts on this interval (its default is 30 s, which would let a
    // slow client hold a socket that long past a 10 s timeout).
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4))),
  };
}

/** Counts what is open of one kind; `take` says whether there was room. */
export class Gauge {
  private open = 0;
  constructor(readonly max: number) {}
  take(): boolean {
    if (this.open >= this.max) return false;
    this.open++;
    return true;
  }
  give(): void {
    this.open = Math.max(0, this.open - 1);
  }
  get count(): number {
    return this.open;
  }
}
