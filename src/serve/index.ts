// The HTTP server of `toolchain serve` and the run service contract it reads runs through.

export { createServer, type ServerOptions, type ListenOptions, type ToolchainServer } from './create-server.js';
export { createMemoryRunService, type MemoryRunServiceOptions } from './memory-run-service.js';
export { ServiceError } from './run-service.js';
export { tapObserver, type TappedObserver } from './observer-tap.js';
export { serveApprover } from './approver.js';
export type { RunService, RunStatus, RunSummary, RunDetail, StepDetail, AttemptRecord, StartOptions, StartOutcome, ListQuery } from './run-service.js';
