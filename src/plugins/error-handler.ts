// Renders every error, whatever raised it (our ApiError, Fastify, zod, pg), as the one JSON error
// body. Nothing else writes error responses; no stack trace or SQL text ever reaches a client.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ApiError, DependencyUnavailable, type ErrorCode, invalidRequest, notFound, unavailable } from '../http/errors.js';
import type { App } from '../types.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';

interface ZodIssueLike {
  keyword: string;
  instancePath: string;
  message: string;
  params?: { keys?: string[] };
}

/**
 * details.field names the parameter or body field (`scopes`, or the unknown key itself), as
 * docs/contract.md, "Errors", fixes it; the message names the element at fault (`scopes.1`).
 */
function fromValidation(issues: ZodIssueLike[], context: string | undefined): ApiError {
  // an unknown key is usually a typo (`scope`) and explains the other issues: report it first
  const first = issues.find((issue) => issue.keyword === 'unrecognized_keys') ?? issues[0]!;
  const path = first.instancePath.split('/').filter(Boolean);
  const where = context === 'querystring' ? 'query parameter' : 'field';
  if (first.keyword === 'unrecognized_keys' && first.params?.keys?.length) {
    const unknown = [...path, first.params.keys[0]!];
    return invalidRequest(unknown[0]!, `Unknown ${where}: ${unknown.join('.')}`);
  }
  const field = path[0] ?? context ?? 'body';
  const offending = path.length > 0 ? path.join('.') : field;
  // our own messages read as a sentence after the field name ("page must be at least 1")
  const message = /^(must|is|are) /.test(first.message) ? `${offending} ${first.message}` : `${offending}: ${first.message}`;
  return invalidRequest(field, message);
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

export function toApiError(error: FastifyError & { code?: string }): ApiError | null {
  if (error instanceof ApiError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) return fromValidation(error.validation as ZodIssueLike[], error.validationContext);
  switch (error.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidRequest('body', 'Body is empty: send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      // also the parser's prototype-poisoning guard: `__proto__` / `constructor` keys
      return invalidRequest('body', 'Body is not valid JSON, or has a forbidden "__proto__"/"constructor" key');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'Body is too large');
  }
  if (isDatabaseUnavailable(error)) return unavailable('database');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return new ApiError(status, CODE_BY_STATUS[status] ?? 'invalid_request', error.message.slice(0, 200));
  }
  return null;
}

async function errorHandler(app: App) {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (!apiError) {
      request.log.error({ err: error }, 'unhandled error');
      return reply.code(500).send({ error: { code: 'internal_error', message: 'Internal server error' } });
    }
    if (apiError.statusCode >= 500) request.log.warn({ err: error }, apiError.message);
    if (apiError instanceof DependencyUnavailable) app.metrics.unavailableResponses.inc({ dependency: apiError.dependency });
    return reply.code(apiError.statusCode).headers(apiError.headers).send(apiError.toBody());
  });

  // a known path asked with another method is 405 with Allow (RFC 9110), not a 404 that would
  // say the path does not exist: the paths are collected as routes register
  const routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[\w-]+/g, '[^/]+')}/?$`);
    const methods = [route.method].flat();
    const known = routes.find((entry) => entry.pattern.source === pattern.source);
    if (known) methods.forEach((method) => known.methods.add(method));
    else routes.push({ pattern, methods: new Set(methods) });
  });
  const allowedMethods = (path: string) => {
    const allowed = new Set<string>();
    for (const route of routes) if (route.pattern.test(path)) route.methods.forEach((method) => allowed.add(method));
    return [...allowed].sort();
  };

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = allowedMethods(path);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      const error = new ApiError(
        405,
        'method_not_allowed',
        `${request.method} is not allowed on ${path.slice(0, 200)}; use ${allowed.join(', ')}`,
        { allowed_methods: allowed },
      );
      return reply.code(405).header('allow', allowed.join(', ')).send(error.toBody());
    }
    const error = notFound(`No route for ${request.method} ${path.slice(0, 200)}`);
    return reply.code(404).send(error.toBody());
  });
}

export default fp(errorHandler, { name: 'error-handler', dependencies: ['metrics'] });
