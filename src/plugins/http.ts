// HTTP conventions every route shares: zod validates and serializes; only JSON bodies are parsed
// (anything else is 415), strictly (a key given twice, or a lone surrogate anywhere in the body,
// the query or the path, is 400: src/http/strict-json.ts); every response names its request id.
import fp from 'fastify-plugin';
import { z } from 'zod';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { invalidRequest } from '../http/errors.js';
import { isWellFormed, strictJsonRefusal } from '../http/strict-json.js';
import type { App } from '../types.js';

function malformedParameter(values: unknown): string | null {
  if (!values || typeof values !== 'object') return null;
  for (const [name, value] of Object.entries(values)) {
    const texts = Array.isArray(value) ? value : [value];
    if (!isWellFormed(name) || texts.some((text) => typeof text === 'string' && !isWellFormed(text))) return name;
  }
  return null;
}

async function http(app: App) {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.removeContentTypeParser(['text/plain']);

  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, body as string, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      const refusal = strictJsonRefusal(body as string, value);
      return refusal ? done(refusal, undefined) : done(null, value);
    });
  });

  // a route that takes no query parameters refuses any (a typo must not be silently ignored):
  // documented routes without a querystring schema get an empty strict one (not the reference
  // pages under /docs, /openapi.json or the console's assets, which are hidden)
  app.addHook('onRoute', (route) => {
    if (route.schema?.querystring || route.schema?.hide || !route.schema) return;
    route.schema = { ...route.schema, querystring: z.strictObject({}) };
  });

  // Synchronous hooks in callback style, here and in the other per-request hooks: an async hook
  // costs every request a promise and a microtask turn (bench P1, the cheapest page, felt it).
  // A lone surrogate can only arrive percent-encoded: a URL without '%' has nothing to check.
  app.addHook('preValidation', (request, _reply, done) => {
    const name = request.url.includes('%') ? (malformedParameter(request.query) ?? malformedParameter(request.params)) : null;
    done(name ? invalidRequest(name, `${name} holds text that is not valid Unicode`) : undefined);
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
}

export default fp(http, { name: 'http' });
