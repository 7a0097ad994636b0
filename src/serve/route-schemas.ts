// JSON Schemas of the routes' bodies, parameters and query strings. Fastify compiles
// them once; a request that breaks one is answered 400 `{ error: { code: 'BAD_REQUEST', … } }`.

// `#` and `@` for the runs triggers start (`CHAIN#ID@TICK`): sent URL-encoded in a path.
const runId = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:#@-]*$' } as const;
const chainName = { type: 'string', minLength: 1, maxLength: 200 } as const;

export const RUN_STATUSES = ['running', 'waiting', 'succeeded', 'failed', 'compensation_failed', 'cancelled'] as const;

export const startRunSchema = {
  body: {
    type: 'object',
    required: ['chain'],
    additionalProperties: false,
    properties: {
      chain: chainName,
      input: { type: 'object' },
      run_id: runId,
    },
  },
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { wait: { type: 'boolean', default: false } },
  },
} as const;

/** `POST /api/runs/ID/rerun`: the step to start from, inputs to replace, and whether a changed chain may run. */
export const rerunSchema = {
  params: { type: 'object', required: ['id'], properties: { id: runId } },
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      from: { type: 'string', minLength: 1, maxLength: 200 },
      input: { type: 'object' },
      allow_changed: { type: 'boolean' },
    },
  },
} as const;

export const listRunsSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { type: 'string', enum: RUN_STATUSES },
      chain: chainName,
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
    },
  },
} as const;

export const runParamsSchema = {
  params: { type: 'object', required: ['id'], properties: { id: runId } },
} as const;

export const stepParamsSchema = {
  params: { type: 'object', required: ['id', 'key'], properties: { id: runId, key: { type: 'string', minLength: 1, maxLength: 1000 } } },
} as const;

export const chainParamsSchema = {
  params: { type: 'object', required: ['name'], properties: { name: chainName } },
} as const;

/** An approval request's id (`ap_…`), or any wait's. */
const waitId = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' } as const;

export const sendEventSchema = {
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      payload: {},
      id: { type: 'string', minLength: 1, maxLength: 200 },
    },
  },
} as const;

export const listApprovalsSchema = {
  querystring: { type: 'object', additionalProperties: false, properties: { run: runId } },
} as const;

export const decideApprovalSchema = {
  params: { type: 'object', required: ['id'], properties: { id: waitId } },
  body: {
    type: 'object',
    required: ['decision'],
    additionalProperties: false,
    properties: {
      decision: { type: 'string', enum: ['approve', 'deny'] },
      comment: { type: 'string', maxLength: 2000 },
    },
  },
} as const;

/** Keys a body may have, for did-you-mean on an unknown one. */
export const START_BODY_KEYS = Object.keys(startRunSchema.body.properties);

/** A trigger to pause or resume: `CHAIN#ID` (the `#` sent as %23), or `CHAIN` for every trigger of the chain. */
const triggerTarget = { type: 'string', minLength: 1, maxLength: 400 } as const;

export const listTriggersSchema = {
  querystring: { type: 'object', additionalProperties: false, properties: { chain: chainName } },
} as const;

export const pauseTriggerSchema = {
  params: { type: 'object', required: ['key'], properties: { key: triggerTarget } },
  body: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { reason: { type: 'string', maxLength: 1000 } },
  },
} as const;

export const resumeTriggerSchema = {
  params: { type: 'object', required: ['key'], properties: { key: triggerTarget } },
} as const;
