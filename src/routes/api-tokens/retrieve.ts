// GET /api/v1/api-tokens/{token_id}: one token of the caller's company (another company's is 404).
import { errorResponses } from '../../http/schemas.js';
import { notFound } from '../../http/errors.js';
import type { App } from '../../types.js';
import { apiToken, isTokenId, tokenIdParams } from './schema.js';

export default async function retrieveApiToken(app: App) {
  app.get('/:token_id', {
    schema: {
      operationId: 'retrieveApiToken',
      summary: 'Retrieve an API token',
      tags: ['API tokens'],
      security: [{ employeeJwt: [] }],
      params: tokenIdParams,
      response: { 200: apiToken, ...errorResponses(401, 403, 404, 429, 503) },
    },
    handler: async (request) => {
      const { token_id: tokenId } = request.params;
      const record = isTokenId(tokenId) ? await app.tokenRepository.findToken(request.employee.companyId, tokenId) : null;
      if (!record) throw notFound('No API token with this id');
      return record;
    },
  });
}
