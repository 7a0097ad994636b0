import type { FastifyError, FastifyInstance } from 'fastify';
import { didYouMean } from '../common/errors.js';
import { ServiceError } from './run-service.js';
import { START_BODY_KEYS } from './route-schemas.js';

// Every error answer has one shape: `{ error: { code, message } }`. Schema failures become
// BAD_REQUEST with the field and what was expected; Fastify's own refusals keep their status with
// a readable code; anything unexpected is a 500 that is logged, never a stack trace to the client.

const FASTIFY_CODES: Readonly<Record<string, string>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BAD_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
};

interface AjvIssue {
  readonly instancePath: string;
  readonly message?: string;
  readonly keyword: string;
  readonly params: Record<string, unknown>;
}

function describe(issue: AjvIssue, context: string | undefined): string {
  const where = `${context ?? 'request'}${issue.instancePath.replace(/\//g, '.')}`;
  if (issue.keyword === 'additionalProperties') {
    const key = String(issue.params.additionalProperty);
    const suggestion = context === 'body' ? didYouMean(key, START_BODY_KEYS) : undefined;
    return `${where} has an unknown key '${key}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`;
  }
  if (issue.keyword === 'enum') return `${where} must be one of ${(issue.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  return `${where} ${issue.message ?? 'is invalid'}`;
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validation?: AjvIssue[]; validationContext?: string }, request, reply) => {
    if (error instanceof ServiceError) {
      if (error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS));
      return reply.code(error.status).send({ error: { code: error.code, message: error.message } });
    }
    if (error.validation) {
      const message = error.validation.map((issue) => describe(issue, error.validationContext)).join('; ');
      return reply.code(400).send({ error: { code: 'BAD_REQUEST', message } });
    }
    const status = error.statusCode ?? 500;
    if (status < 500) {
      const code = FASTIFY_CODES[error.code] ?? (status === 404 ? 'NOT_FOUND' : 'BAD_REQUEST');
      return reply.code(status).send({ error: { code, message: error.message } });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ error: { code: 'INTERNAL', message: 'the server failed to answer; see its log' } });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: { code: 'NOT_FOUND', message: `no route ${request.method} ${request.url.split('?')[0]}` } }),
  );
}
