// GET /api/v1/api-tokens: the company's tokens, newest first, in the data endpoints' envelope.
import { z } from 'zod';
import { envelopeSchema, errorResponses, paginationFor, paginationQuery } from '../../http/schemas.js';
import { TOKEN_STATES } from '../../tokens/scopes.js';
import type { App } from '../../types.js';
import { apiToken } from './schema.js';

const querystring = z.strictObject({
  ...paginationQuery,
  state: z
    .enum(TOKEN_STATES, { error: `must be one of ${TOKEN_STATES.join(', ')}` })
    .optional()
    .describe('Only tokens in this state; omitted: all'),
});

const tokenPage = envelopeSchema(apiToken, z.object({ state: z.enum(TOKEN_STATES).nullable() }));
/** The 200's JSON, for the tests: a change of the schema breaks them at the type check. */
export type ApiTokenListJson = z.infer<typeof tokenPage>;

export default async function listApiTokens(app: App) {
  app.get('/', {
    schema: {
      operationId: 'listApiTokens',
      summary: 'List API tokens',
      tags: ['API tokens'],
      security: [{ employeeJwt: [] }],
      querystring,
      response: {
        200: tokenPage,
        ...errorResponses(400, 401, 403, 429, 503),
      },
    },
    handler: async (request) => {
      const { companyId } = request.employee;
      const { page, page_size: pageSize, state = null } = request.query;
      const { records, totalCount } = await app.tokenRepository.listTokens(
        companyId,
        state,
        app.clock.now(),
        pageSize,
        (page - 1) * pageSize,
      );
      return {
        data: records,
        meta: {
          company_id: companyId,
          filters: { state },
          pagination: paginationFor(page, pageSize, totalCount),
        },
      };
    },
  });
}
