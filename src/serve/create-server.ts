import fastifyStatic from '@fastify/static';
import { relative, sep } from 'node:path';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { approvedBy } from '../call/index.js';
import type { Engine } from '../engine/types.js';
import { ToolchainError } from '../common/errors.js';
import { createObserver, type Observer } from '../observe/observe.js';
import type { ApprovalRequest, ApproveCallback } from '../registry/types.js';
import { serveApprover } from './approver.js';
import { checkListenHost, installAuth } from './auth.js';
import { installErrorHandlers } from './http-errors.js';
import { builtInspector, inspectorFilesIn } from './inspector-files.js';
import { createMemoryRunService } from './memory-run-service.js';
import { registerCatalogueRoutes } from './routes-catalogue.js';
import { registerHookRoutes } from './routes-hooks.js';
import { registerRunValueRoutes } from './routes-run-values.js';
import { registerRunRoutes } from './routes-runs.js';
import { registerTriggerRoutes } from './routes-triggers.js';
import { registerWaitRoutes } from './routes-waits.js';
import { tapOf } from './observer-tap.js';
import type { RunService } from './run-service.js';
import { checkLimits, DEFAULT_LIMITS, Gauge, httpServerOptions, type ServeLimits } from './server-limits.js';

// `createServer(engine, options)`: the HTTP server of `toolchain serve` over one engine, for
// `toolchain serve` and for embedding. It does not listen until `listen()`; `app.inject()` tests
// it without a socket.

export interface ServerOptions {
  /** Bearer token every route but /healthz and /hooks/ (webhooks, which are signed) requires. Without one, only loopback. */
  readonly token?: string;
  /**
   * Dangerous tools: names (bare or `plugin/tool`) are standing approvals, and any other dangerous
   * call of a run started over HTTP waits for a person's decision (approver.ts); or a callback. Default: no standing approval.
   */
  readonly approve?: readonly string[] | ApproveCallback;
  /** Where runs live (default: in memory, the last `maxRuns`). */
  readonly service?: RunService;
  /** With the default service: finished runs kept (default 1,000). */
  readonly maxRuns?: number;
  /** Metrics, logs and traces (default: the engine's, else a new observer with `logger`). */
  readonly observer?: Observer;
  /** Log lines of the server and of the default observer (default: silent). */
  readonly logger?: Logger;
  /** Folder of the inspector's files (default: the built dist/web/); false serves no page. */
  readonly webRoot?: string | false;
  /** SSE comment interval (default 15 s). */
  readonly heartbeatMs?: number;
  /** Timeouts and caps on what clients may hold (server-limits.ts; default DEFAULT_LIMITS). */
  readonly limits?: Partial<ServeLimits>;
}

export interface ListenOptions {
  /** Default 127.0.0.1. A host other than loopback needs a token. */
  readonly host?: string;
  /** Default 7300; 0 picks a free port. */
  readonly port?: number;
}

export interface ToolchainServer {
  readonly app: FastifyInstance;
  readonly service: RunService;
  readonly observer: Observer;
  /** Prometheus text of the server's metrics (what GET /metrics answers). */
  metrics(): Promise<string>;
  /** Starts listening; resolves with the base URL. Refuses a non-loopback host without a token. */
  listen(options?: ListenOptions): Promise<string>;
  /** Graceful stop: no new connections, event streams end, in-flight requests finish, runs get `graceMs` (default 10 s) before they are cancelled. */
  close(graceMs?: number): Promise<void>;
}

export async function createServer(engine: Engine, options: ServerOptions = {}): Promise<ToolchainServer> {
  const logger = options.logger ?? pino({ level: 'silent' });
  // An engine made with `observe` already counts every run it makes; the service must not count them twice.
  const observer = options.observer ?? engine.observer ?? createObserver(engine, { logger });
  const engineObserves = engine.observer !== undefined && observer === engine.observer;
  const approve: ApproveCallback = typeof options.approve === 'function' ? options.approve : serveApprover(options.approve ?? []);
  const approvedNow = (req: ApprovalRequest): boolean => (typeof options.approve === 'function' ? false : approvedBy(options.approve ?? [])(req));
  const limits: ServeLimits = checkLimits({ ...DEFAULT_LIMITS, ...options.limits });
  const tap = tapOf(engine.observer);
  const service =
    options.service ??
    createMemoryRunService(engine, {
      ...(engineObserves ? {} : { onEvent: observer.onEvent }),
      approve,
      ...(tap !== undefined ? { tap } : {}),
      ...(options.maxRuns !== undefined ? { maxRuns: options.maxRuns } : {}),
      maxRunsInFlight: limits.maxRunsInFlight,
      retryAfterS: limits.retryAfterS,
    });
  let stop!: () => void;
  const stopping = new Promise<void>((resolve) => {
    stop = resolve;
  });

  const app: FastifyInstance = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Run events are logged; one line per HTTP request would double every run's lines.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: limits.bodyBytes,
    http: httpServerOptions(limits),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Report unknown body keys instead of dropping them silently; coerce query strings only.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: true } },
  });
  // Sockets past the cap are closed as they connect, before a byte of theirs is parsed.
  app.server.maxConnections = limits.maxConnections;
  installErrorHandlers(app);
  installAuth(app, options.token);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    stop();
  });
  // A keep-alive connection whose request was in flight at shutdown is closed after its answer,
  // or the server would wait for the client to hang up.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/metrics', async (_req, reply) => reply.header('content-type', observer.metricsContentType).send(await observer.metrics()));
  registerCatalogueRoutes(app, engine, approvedNow);
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const streams = new Gauge(limits.maxEventStreams);
  registerRunRoutes(app, { service, stopping, heartbeatMs, streams, retryAfterS: limits.retryAfterS, valueBytes: limits.valueBytes, answerBytes: limits.answerBytes });
  registerRunValueRoutes(app, service);
  // Without a token only loopback reaches the server: whoever decides (or pauses) is a local user.
  const decider = options.token !== undefined ? 'token' : 'local';
  registerWaitRoutes(app, engine, { decider });
  registerTriggerRoutes(app, engine, { decider, stopping, heartbeatMs, streams, retryAfterS: limits.retryAfterS });
  // The chains' webhook triggers (with an engine that fires triggers): signed, so no token.
  await registerHookRoutes(app, engine);
  await registerInspector(app, options.webRoot);

  return {
    app,
    service,
    observer,
    metrics: () => observer.metrics(),
    async listen(listen: ListenOptions = {}) {
      const host = listen.host ?? '127.0.0.1';
      checkListenHost(host, options.token);
      return app.listen({ host, port: listen.port ?? 7300 });
    },
    async close(graceMs = 10_000) {
      stop();
      await Promise.all([app.close(), service.close(graceMs)]);
    },
  };
}

async function registerInspector(app: FastifyInstance, webRoot: string | false | undefined): Promise<void> {
  if (webRoot === false) return;
  const files = webRoot !== undefined ? inspectorFilesIn(webRoot) : builtInspector();
  if (files === undefined) {
    app.get('/', async (_req, reply) => reply.type('text/plain').send('The run inspector is not built: run `npm run build`. The API is under /api/.\n'));
    return;
  }
  const { dir, served, hashed } = files;
  await app.register(fastifyStatic, {
    root: dir,
    prefix: '/',
    index: ['index.html'],
    // Only the built page and the files its build names: nothing else in the folder is served.
    ...(served !== undefined ? { allowedPath: (path: string) => path === '/' || served.has(path.slice(1)) } : {}),
    // Hashed asset names never change content; anything else is always revalidated. The page
    // may load and call nothing but this server.
    setHeaders: (reply, path) => {
      reply.header('cache-control', hashed.has(relative(dir, path).split(sep).join('/')) ? 'public, max-age=31536000, immutable' : 'no-cache');
      reply.header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
    },
  });
}
