// POST /api/v1/api-tokens/{token_id}/revoke: idempotent. Revoking a revoked token returns the same
// object; revoking an expired one marks it revoked. Nothing moves a token out of revoked.
import { z } from 'zod';
import { employeeOrigin } from '../../audit/origin.js';
import { errorResponses } from '../../http/schemas.js';
import { notFound } from '../../http/errors.js';
import { revokeEverywhere } from '../../tokens/revoke-everywhere.js';
import type { App } from '../../types.js';
import { emptyBodyIsNoBody } from '../../http/empty-body.js';
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
      // the revocation reaches every process before the revoke commits (src/tokens/revoke-everywhere.ts):
      // when it cannot, nothing is committed and the call is 503
      const outcome = await revokeEverywhere(
        app,
        request.log,
        { companyId, tokenId },
        (announce) => app.tokenRepository.revokeToken(companyId, tokenId, app.clock.now(), employeeOrigin(request), announce),
        (result) => result.revokedNow,
      );
      if (!outcome.found) throw notFound('No API token with this id');
      return (await app.tokenRepository.findToken(companyId, tokenId))!;
    },
  });
}
