import type { FastifyInstance } from 'fastify';
import type { Engine } from '../engine/types.js';
import { didYouMean } from '../common/errors.js';
import { chainGraph } from '../graph/chain-graph.js';
import type { ApprovalRequest } from '../registry/types.js';
import { chainParamsSchema } from './route-schemas.js';
import { ServiceError } from './run-service.js';

// What can be run: GET /api/chains, /api/chains/NAME (definition, inputs schema, DAG), /api/tools.

export function registerCatalogueRoutes(app: FastifyInstance, engine: Engine, approved: (req: ApprovalRequest) => boolean): void {
  app.get('/api/chains', async () => ({
    chains: engine
      .chains()
      .map((p) => ({ name: p.name, version: p.version, description: p.description, file: p.file, steps: p.steps.length, inputs: p.inputs.schema }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    problems: engine.diagnostics().filter((d) => d.severity === 'error').map((d) => ({ code: d.code, message: d.message, file: d.file, line: d.line, col: d.col })),
  }));

  app.get<{ Params: { name: string } }>('/api/chains/:name', { schema: chainParamsSchema }, async (req) => {
    const plan = engine.chain(req.params.name);
    if (!plan) {
      const suggestion = didYouMean(req.params.name, engine.chains().map((p) => p.name));
      throw new ServiceError(404, 'CHAIN_NOT_FOUND', `no chain named '${req.params.name}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`);
    }
    return {
      name: plan.name,
      version: plan.version,
      description: plan.description,
      file: plan.file,
      hash: plan.hash,
      inputs: plan.inputs.schema,
      outputs: plan.outputs?.sources,
      concurrency: plan.concurrency,
      timeout_ms: plan.timeoutMs,
      tools: plan.tools,
      chains: plan.chains,
      graph: chainGraph(plan),
    };
  });

  app.get('/api/tools', async () => ({
    tools: engine
      .tools()
      .tools()
      .map((t) => ({
        name: t.name,
        qualified_name: t.qualifiedName,
        plugin: t.plugin,
        version: t.version,
        description: t.description,
        parameters: t.parameters,
        returns: t.returns,
        dangerous: t.dangerous,
        // Whether a call over HTTP would be allowed (only tools listed with --approve).
        approved: !t.dangerous || approved({ tool: t.qualifiedName, args: {}, step: '', run_id: '' }),
      })),
  }));
}
