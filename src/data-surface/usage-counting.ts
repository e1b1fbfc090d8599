// Usage per API token, counted where the data surface answers: every request whose token was
// recognised, refused ones too (403, 404, 429 once the token is known), by route pattern and
// answer class (src/tokens/usage.ts). A request refused for its credentials (401) counts for no token.
// Every answer counted here moves the token's last_used_at too: the authenticator notes the ones it
// lets through, this hook the ones refused before it did (a 429), so last_used_at is never older
// than the last request in the usage.
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
      const at = app.clock.now().getTime();
      usage.count(tokenId, request.routeOptions.url!, reply.statusCode, request.ip, request.headers['user-agent'], at);
      if (!request.apiToken) app.lastUsed.touch(tokenId, new Date(at));
    }
    done();
  });
}
