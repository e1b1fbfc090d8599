// The data surface's front door, for every route registered under it: a token in the query
// string or body is refused (and never used), before anything else; the Authorization header's
// API token is authenticated; the route's scope is checked; then the units the request may read are resolved
// once (src/analytics/access.ts) and handed to the handler as request.unitScope.
import type { FastifyRequest } from 'fastify';
import { bearerCredential } from '../auth/bearer.js';
import { invalidRequest } from '../http/errors.js';
import type { Scope } from '../tokens/scopes.js';
import type { App } from '../types.js';

const SECRET_PARAMETERS = ['token', 'api_token', 'access_token'];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a data route requires; every route under the data surface must name one. */
    scope?: Scope;
  }
}

function refuseSecretsOutsideHeader(request: FastifyRequest) {
  const query = (request.query ?? {}) as Record<string, unknown>;
  for (const name of SECRET_PARAMETERS) {
    if (name in query) {
      throw invalidRequest(name, `API tokens go in the Authorization header, never in the query string ("${name}")`);
    }
  }
}

export function registerTokenAuth(app: App) {
  app.addHook('onRoute', (route) => {
    if (!route.config?.scope) throw new Error(`data route ${route.url} has no scope`);
  });

  app.addHook('onRequest', async (request) => refuseSecretsOutsideHeader(request));

  // Data endpoints are GETs, whose bodies Fastify does not parse: read any body here, bounded,
  // only to refuse it, naming a token field when one is there.
  app.addHook('preParsing', async (request, reply, payload) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (length === 0 && request.headers['transfer-encoding'] === undefined) {
      try {
        request.apiToken = await app.tokenAuthenticator.authenticate(
          bearerCredential(request.headers.authorization),
          (token) => app.rateLimits.check('analytics_api_token', token.id, request, reply),
        );
      } catch (error) {
        // failed credentials count against the caller's IP: guessing tokens is rate limited too
        if (!request.apiToken && (error as { statusCode?: number }).statusCode === 401) await app.rateLimits.checkPublic(request, reply);
        throw error;
      }
      return payload;
    }
    let text = '';
    for await (const chunk of payload) {
      text += String(chunk);
      if (text.length > 65_536) break;
    }
    const secret = SECRET_PARAMETERS.find((name) => new RegExp(`"${name}"\\s*:|(^|&)${name}=`).test(text));
    if (secret) throw invalidRequest(secret, 'API tokens go in the Authorization header, never in the body');
    throw invalidRequest('body', 'Data endpoints take no request body');
  });

  app.addHook('preHandler', async (request) => {
    const query = request.query as { cooling_unit_id?: number; location_id?: number };
    request.unitScope = await app.accessControl.authorize(request.apiToken, request.routeOptions.config.scope!, query);
  });
}
