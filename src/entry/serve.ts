// `toolchain/serve`: the HTTP server of `toolchain serve` for embedding (Fastify and its static
// files plugin are optional packages, loaded on the first createServer), and the run service
// contract it reads runs through.

export { createServer } from '../serve/load-server.js';
export { createMemoryRunService, type MemoryRunServiceOptions } from '../serve/memory-run-service.js';
export { ServiceError } from '../serve/run-service.js';
export type { ServerOptions, ListenOptions, ToolchainServer } from '../serve/create-server.js';
export type {
  RunService,
  RunStatus,
  RunSummary,
  RunDetail,
  StepDetail,
  AttemptRecord,
  StartOptions,
  StartOutcome,
  ListQuery,
} from '../serve/run-service.js';
