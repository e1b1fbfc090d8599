// The data surface's front door, for every route registered under it: a token in the query
// string or body is refused (and never used); the Authorization header's API token is
// authenticated; the route's scope is checked; then the units the request may read are resolved
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

  app.addHook('onRequest', async (request) => {
    refuseSecretsOutsideHeader(request);
    request.apiToken = await app.tokenAuthenticator.authenticate(bearerCredential(request.headers.authorization));
  });

  app.addHook('preValidation', async (request) => {
    if (request.body === undefined) return;
    const body = request.body as Record<string, unknown> | null;
    const secret = SECRET_PARAMETERS.find((name) => body && typeof body === 'object' && name in body);
    if (secret) throw invalidRequest(secret, 'API tokens go in the Authorization header, never in the body');
    throw invalidRequest('body', 'Data endpoints take no request body');
  });

  app.addHook('preHandler', async (request) => {
    const query = request.query as { cooling_unit_id?: number; location_id?: number };
    request.unitScope = await app.accessControl.authorize(request.apiToken, request.routeOptions.config.scope!, query);
  });
}
