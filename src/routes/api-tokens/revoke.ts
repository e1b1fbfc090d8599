// POST /api/v1/api-tokens/{token_id}/revoke: idempotent. Revoking a revoked token returns the same
// object; revoking an expired one marks it revoked. Nothing moves a token out of revoked.
import { errorResponses } from '../../http/schemas.js';
import { notFound } from '../../http/errors.js';
import type { App } from '../../types.js';
import { apiToken, isTokenId, tokenIdParams } from './schema.js';

export default async function revokeApiToken(app: App) {
  // The call has no body, but management clients send `Content-Type: application/json` on every
  // POST (service-spec: "JSON bodies"); an empty body with that type must not be a 400. Scoped to
  // this plugin: everywhere else an empty JSON body stays an error.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    return parseJson(request, body as string, done);
  });

  app.post('/:token_id/revoke', {
    schema: {
      summary: 'Revoke an API token',
      tags: ['API tokens'],
      security: [{ employeeJwt: [] }],
      params: tokenIdParams,
      response: { 200: apiToken, ...errorResponses(401, 403, 404, 415, 429, 503) },
    },
    handler: async (request) => {
      const { token_id: tokenId } = request.params;
      const record = isTokenId(tokenId)
        ? await app.tokenRepository.revokeToken(request.employee.companyId, tokenId, app.clock.now())
        : null;
      if (!record) throw notFound('No API token with this id');
      // before answering: once this call returns, no process may accept the token
      await app.revocations.announce(record.id);
      return record;
    },
  });
}
