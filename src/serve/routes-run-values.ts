import type { FastifyInstance } from 'fastify';
import { runParamsSchema, stepParamsSchema } from './route-schemas.js';
import { ServiceError, type RunService } from './run-service.js';

// The parts of a run that `GET /api/runs/ID` and the event stream may leave out for their size
// (bounded-values.ts), each whole on a route of its own: one step (`GET /api/runs/ID/steps/KEY`,
// KEY as in the run's `steps`: `step`, `step[i]`, `step›substep`), the run's input and its outputs.
// One answer is then at most one value the run store holds, not every value of the run.

export function registerRunValueRoutes(app: FastifyInstance, service: RunService): void {
  const detail = async (id: string) => {
    const run = await service.get(id);
    if (!run) throw new ServiceError(404, 'RUN_NOT_FOUND', `no run with id '${id}'`);
    return run;
  };

  app.get<{ Params: { id: string; key: string } }>('/api/runs/:id/steps/:key', { schema: stepParamsSchema }, async (req) => {
    const run = await detail(req.params.id);
    const step = Object.hasOwn(run.steps, req.params.key) ? run.steps[req.params.key] : undefined;
    if (step === undefined) throw new ServiceError(404, 'STEP_NOT_FOUND', `run '${req.params.id}' has no step '${req.params.key}'`);
    return { run_id: run.run_id, key: req.params.key, ...step };
  });

  app.get<{ Params: { id: string } }>('/api/runs/:id/input', { schema: runParamsSchema }, async (req) => ({ input: (await detail(req.params.id)).input ?? null }));
  app.get<{ Params: { id: string } }>('/api/runs/:id/outputs', { schema: runParamsSchema }, async (req) => ({ outputs: (await detail(req.params.id)).outputs ?? null }));
}
