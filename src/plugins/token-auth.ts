// The data surface's front door, for every route registered under it: the Authorization header's
// API token is authenticated and counted against its rate limit; a token in the query string or
// body is refused (and never used); the route's scope is checked; then the units the request may
// read are resolved once (src/data-surface/authorize.ts) and handed to the handler as request.unitScope.
import type { FastifyRequest } from 'fastify';
import { bearerCredential } from '../auth/bearer.js';
import { countOrDefer, isConditional } from '../data-surface/conditional-requests.js';
import { invalidRequest } from '../http/errors.js';
import { ipRefusal } from '../tokens/allowed-ips.js';
import type { Scope } from '../tokens/scopes.js';
import { inSpan } from '../tracing/spans.js';
import type { App } from '../types.js';

const SECRET_PARAMETERS = ['token', 'api_token', 'access_token'];

/** The token check's span (src/tracing/spans.ts): its cache hit or miss is added by the authenticator, never the token. */
const TOKEN_CHECK_SPAN = { 'coldtrack.token.check': 'api-token' };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a data route requires; every route under the data surface must name one. */
    scope?: Scope;
  }
}

/** The 400 for a token sent in the query string, if one was. */
function secretInQuery(request: FastifyRequest) {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const name = SECRET_PARAMETERS.find((parameter) => parameter in query);
  return name ? invalidRequest(name, `API tokens go in the Authorization header, never in the query string ("${name}")`) : null;
}

const hasBody = (request: FastifyRequest) =>
  Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;

/**
 * Data endpoints are GETs, whose bodies Fastify does not parse: any body is read here, bounded,
 * only to refuse it, naming a token field when one is there.
 */
async function bodyRefusal(payload: AsyncIterable<unknown>) {
  let text = '';
  for await (const chunk of payload) {
    text += String(chunk);
    if (text.length > 65_536) break;
  }
  const secret = SECRET_PARAMETERS.find((name) => new RegExp(`"${name}"\\s*:|(^|&)${name}=`).test(text));
  return secret
    ? invalidRequest(secret, 'API tokens go in the Authorization header, never in the body')
    : invalidRequest('body', 'Data endpoints take no request body');
}

export function registerTokenAuth(app: App) {
  app.addHook('onRoute', (route) => {
    if (!route.config?.scope) throw new Error(`data route ${route.url} has no scope`);
  });

  // Every request is counted, a refused one too: against its token when the Authorization header
  // carries a valid one (with the X-RateLimit headers), otherwise against the caller's IP, as
  // failed credentials are (guessing tokens is rate limited too). A token misplaced in the query
  // string or body is never used, and the request is 400 whatever the header holds. A live token
  // used from outside its IP allow-list is 403, counted against the caller's IP and not the
  // token's budget: whoever holds a leaked copy elsewhere cannot use up the partner's limit. A
  // conditional request (If-None-Match) is counted only once it is known not to be a 304
  // (data-surface/conditional-requests.ts), unless its token's window is spent already.
  app.addHook('preParsing', async (request, reply, payload) => {
    const refusal = secretInQuery(request) ?? (hasBody(request) ? await bodyRefusal(payload) : null);
    const conditional = !refusal && isConditional(request);
    try {
      request.apiToken = await inSpan('token check', TOKEN_CHECK_SPAN, () =>
        app.tokenAuthenticator.authenticate(bearerCredential(request), (token) => {
          // a 429 and a 403 ip_not_allowed count in the token's usage (data-surface/usage-counting.ts)
          request.usageTokenId = token.id;
          if (ipRefusal(token, request.ip)) return Promise.resolve();
          return conditional
            ? countOrDefer(app, token, request, reply)
            : app.rateLimits.check('analytics_api_token', token.id, request, reply);
        }),
      );
    } catch (error) {
      // no valid credentials (401, or a malformed Authorization: 400): counted by client IP
      const status = (error as { statusCode?: number }).statusCode;
      if (request.apiToken || (status !== 401 && status !== 400)) throw error;
      await app.rateLimits.checkPublic(request, reply);
      throw refusal ?? error;
    }
    // only once the token is known to be live: an unknown, revoked or expired one stays a 401
    const outsideAllowList = ipRefusal(request.apiToken, request.ip);
    if (outsideAllowList) {
      await app.rateLimits.checkPublic(request, reply);
      throw refusal ?? outsideAllowList;
    }
    if (refusal) throw refusal;
    return payload;
  });

  app.addHook('preHandler', async (request) => {
    const query = request.query as { cooling_unit_id?: number; location_id?: number };
    request.unitScope = await app.accessControl.authorize(request.apiToken, request.routeOptions.config.scope!, query);
  });
}
