// Usage per API token, counted where the data surface answers: every request whose token was
// recognised, refused ones too (403, 404, 429 once the token is known), by route pattern and
// answer class (src/tokens/usage.ts). A request refused for its credentials (401) counts for no token.
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token a request presented, known before its rate limit is checked (token-auth). */
    usageTokenId: string | null;
  }
}

export function registerUsageCounting(app: App) {
  app.decorateRequest('usageTokenId', null);
  const usage = app.tokenUsage;
  if (!usage) return;
  // a callback hook, not an async one: no promise per request
  app.addHook('onResponse', (request, reply, done) => {
    const tokenId = request.apiToken?.id ?? request.usageTokenId;
    if (tokenId !== null && tokenId !== undefined && reply.statusCode !== 401) {
      usage.count(
        tokenId,
        request.routeOptions.url!,
        reply.statusCode,
        request.ip,
        request.headers['user-agent'],
        app.clock.now().getTime(),
      );
    }
    done();
  });
}
