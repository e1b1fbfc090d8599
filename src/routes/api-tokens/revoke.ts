// POST /api/v1/api-tokens/{token_id}/revoke: idempotent. Revoking a revoked token returns the same
// object; revoking an expired one marks it revoked. Nothing moves a token out of revoked.
import { z } from 'zod';
import { employeeOrigin } from '../../audit/origin.js';
import { errorResponses } from '../../http/schemas.js';
import { notFound, unavailable } from '../../http/errors.js';
import type { App } from '../../types.js';
import { emptyBodyIsNoBody } from './empty-body.js';
import { apiToken, isTokenId, tokenIdParams } from './schema.js';

export default async function revokeApiToken(app: App) {
  app.addHook('onRequest', emptyBodyIsNoBody);

  app.post('/:token_id/revoke', {
    schema: {
      operationId: 'revokeApiToken',
      summary: 'Revoke an API token',
      tags: ['API tokens'],
      security: [{ employeeJwt: [] }],
      params: tokenIdParams,
      // nothing to say, but what is said must make sense: `{"reason": ...}` is a 400, not ignored
      body: z.strictObject({}).nullish().describe('No body, or an empty JSON object'),
      response: { 200: apiToken, ...errorResponses(400, 401, 403, 404, 415, 429, 503) },
    },
    handler: async (request) => {
      const { companyId } = request.employee;
      if (!isTokenId(request.params.token_id)) throw notFound('No API token with this id');
      // the id as the database spells it: the marker and the fan-out message name it that way
      const tokenId = request.params.token_id.toLowerCase();
      // the revocation reaches every process before the revoke commits (src/tokens/revocation.ts):
      // when it cannot, nothing is committed and the call is 503
      let announced = false;
      let outcome: { found: boolean; revokedNow: boolean };
      try {
        outcome = await app.tokenRepository.revokeToken(companyId, tokenId, app.clock.now(), employeeOrigin(request), async (id) => {
          try {
            await app.revocations.announce(id);
          } catch (error) {
            request.log.warn({ err: error }, 'revocation could not reach the shared store; revoke not committed');
            throw unavailable('redis');
          }
          announced = true;
        });
      } catch (error) {
        // the marker went out but the commit failed: take it back if the token is still live
        if (announced) {
          const current = await app.tokenRepository.findToken(companyId, tokenId).catch(() => null);
          if (current && !current.revoked) await app.revocations.withdraw(tokenId);
        }
        throw error;
      }
      if (!outcome.found) throw notFound('No API token with this id');
      if (outcome.revokedNow) app.revocations.committed(tokenId);
      return (await app.tokenRepository.findToken(companyId, tokenId))!;
    },
  });
}
