import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { lazyPackage } from '../common/lazy-package.js';

const pino = lazyPackage<typeof import('pino')>('pino');
const promClient = lazyPackage<typeof import('prom-client')>('prom-client');
import type { Tracer } from '@opentelemetry/api';
import type { RunEvent, LogEntry } from '../run-model/events.js';
import { createRunLogger } from './logs.js';
import { createRunMetrics } from './metrics.js';
import type { PlanSource } from './plan-source.js';
import { createRunTracer } from './traces.js';

// One observer per engine: metrics, logs and traces fed by the same run events. Give its
// `onEvent` to every run (the server does) and its `log` to `createEngine({ logger })` so that a
// tool's ctx.log() lands in the same log with its run and step.

export interface ObserverOptions {
  /** Where log lines go (default: none — a silent logger). */
  readonly logger?: Logger;
  /** The metrics registry (default: a new one; never prom-client's global registry). */
  readonly registry?: Registry;
  /** Default: `trace.getTracer('toolchain')`, which records only when the host registered an OTel SDK. */
  readonly tracer?: Tracer;
  /** Turn parts off (all on by default). */
  readonly metrics?: boolean;
  readonly logs?: boolean;
  readonly traces?: boolean;
}

export interface Observer {
  /** Feed every run event here (pass as, or call from, `engine.run(…, { onEvent })`). */
  onEvent(event: RunEvent): void;
  /** A tool's `ctx.log()` line: pass as `createEngine({ logger })`. */
  log(entry: LogEntry): void;
  /** Prometheus text exposition of the metrics. */
  metrics(): Promise<string>;
  readonly metricsContentType: string;
  readonly registry: Registry;
  readonly logger: Logger;
}

export function createObserver(plans: PlanSource, options: ObserverOptions = {}): Observer {
  const registry = options.registry ?? new (promClient().Registry)();
  const logger = options.logger ?? pino().pino({ level: 'silent' });
  const metrics = options.metrics === false ? undefined : createRunMetrics(plans, registry);
  const logs = options.logs === false ? undefined : createRunLogger(logger);
  const traces = options.traces === false ? undefined : createRunTracer(plans, options.tracer);
  const consumers = [metrics, logs, traces].filter((c): c is { onEvent(e: RunEvent): void } => c !== undefined).map((c) => c.onEvent);
  const [a, b, c] = consumers;
  // A fixed fan-out without a loop: this runs for every event of every run.
  const onEvent =
    consumers.length === 3 ? (e: RunEvent): void => (a!(e), b!(e), c!(e))
    : consumers.length === 2 ? (e: RunEvent): void => (a!(e), b!(e))
    : consumers.length === 1 ? a!
    : (): void => undefined;
  return {
    onEvent,
    log: logs ? logs.log : () => undefined,
    metrics: () => registry.metrics(),
    metricsContentType: registry.contentType,
    registry,
    logger,
  };
}
