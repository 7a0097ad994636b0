// Metrics, logs and traces fed by run events, and the observer that joins them.

export { createObserver, type Observer, type ObserverOptions } from './observe.js';
export { createRunMetrics, STEP_DURATION_BUCKETS, type RunMetrics } from './metrics.js';
export { createRunLogger, type RunLogger } from './logs.js';
export { createRunTracer, type RunTracer } from './traces.js';
export type { PlanSource } from './plan-source.js';
export { createBatchedDestination, type BatchedDestination } from './batched-destination.js';
