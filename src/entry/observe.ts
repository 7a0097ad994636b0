// `toolchain/observe`: metrics (Prometheus), logs (pino) and traces (OpenTelemetry) fed by run
// events, as `toolchain serve` uses them.

export { createObserver, createRunMetrics, createRunLogger, createRunTracer } from '../observe/index.js';
export type { Observer, ObserverOptions, RunMetrics, RunLogger, RunTracer, PlanSource } from '../observe/index.js';
