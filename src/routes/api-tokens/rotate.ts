// POST /api/v1/api-tokens/{token_id}/rotate: replaces an active token with a new one of the same
// name, scopes, units and expiry, and ends the old one after a grace period, so a partner can
// deploy the new secret before the old stops working. The raw new token is in this response only.
import { z } from 'zod';
import { employeeOrigin } from '../../audit/origin.js';
import { ApiError, notFound, unavailable } from '../../http/errors.js';
import { errorBody, errorResponses } from '../../http/schemas.js';
import { generateToken, hashToken } from '../../tokens/format.js';
import type { RotationOutcome, RotationRefusal } from '../../tokens/repository.js';
import { DAY_MS, SECOND_MS } from '../../time.js';
import type { App } from '../../types.js';
import { emptyBodyIsNoBody } from '../../http/empty-body.js';
import { apiToken, isTokenId, tokenIdParams } from './schema.js';

const DEFAULT_GRACE_SECONDS = DAY_MS / SECOND_MS;
const MAX_GRACE_SECONDS = (7 * DAY_MS) / SECOND_MS;

// no body (Fastify hands the handler null), an empty one or `{}`: the default grace period
const body = z
  .strictObject({
    grace_period_seconds: z
      .number({ error: `must be a whole number of seconds, 0..${MAX_GRACE_SECONDS}` })
      .int('must be a whole number of seconds')
      .min(0, 'must be at least 0')
      .max(MAX_GRACE_SECONDS, `must be at most ${MAX_GRACE_SECONDS} (7 days)`)
      .default(DEFAULT_GRACE_SECONDS)
      .describe(`How long the old token keeps working, in seconds (0: it stops at once; default ${DEFAULT_GRACE_SECONDS}, 24 hours)`),
  })
  .nullish();

const REFUSALS: Record<RotationRefusal, string> = {
  revoked: 'This token is revoked; only an active token can be rotated',
  expired: 'This token has expired; only an active token can be rotated (create a new one)',
  already_rotated: 'This token was already rotated; rotate its replacement instead',
};

export default async function rotateApiToken(app: App) {
  app.addHook('onRequest', emptyBodyIsNoBody);

  app.post('/:token_id/rotate', {
    config: { carriesSecret: true },
    schema: {
      operationId: 'rotateApiToken',
      summary: 'Rotate an API token',
      description:
        'Creates a replacement token with the same name, company, scopes, units and expires_at, and makes the old token ' +
        'expire after the grace period (or at its own expires_at, if sooner). The raw new token is in this response only. ' +
        'Both tokens name each other in rotated_from / replaced_by. The body is optional: without one (or with an empty ' +
        'one, whatever its Content-Type) the grace period is 86400 s.',
      tags: ['API tokens'],
      security: [{ employeeJwt: [] }],
      params: tokenIdParams,
      body,
      response: {
        201: apiToken.extend({ token: z.string().describe('The raw new token, shown once') }),
        409: errorBody.describe('The token is revoked, expired or already rotated (code conflict, details.reason)'),
        ...errorResponses(400, 401, 403, 404, 415, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const { companyId, userId } = request.employee;
      if (!isTokenId(request.params.token_id)) throw notFound('No API token with this id');
      // the id as the database spells it: the marker and the fan-out message name it that way
      const tokenId = request.params.token_id.toLowerCase();
      const graceMs = (request.body?.grace_period_seconds ?? DEFAULT_GRACE_SECONDS) * SECOND_MS;

      const token = generateToken();
      // like a revoke, the old token's new expiry reaches every process before the rotation
      // commits (src/tokens/revocation.ts): when it cannot, nothing is committed and the call is 503
      let announced: number | null = null;
      let outcome: RotationOutcome;
      try {
        outcome = await app.tokenRepository.rotateToken(
          {
            companyId,
            tokenId,
            rotatedBy: userId,
            tokenHash: hashToken(token),
            now: app.clock.now(),
            graceMs,
            origin: employeeOrigin(request),
          },
          async (id, expiresAt) => {
            try {
              await app.revocations.announceExpiry(id, expiresAt.getTime());
            } catch (error) {
              request.log.warn({ err: error }, 'rotation could not reach the shared store; rotation not committed');
              throw unavailable('redis');
            }
            announced = expiresAt.getTime();
          },
        );
      } catch (error) {
        // the marker went out but the commit failed: take it back
        if (announced !== null) await app.revocations.withdraw(tokenId, announced);
        throw error;
      }
      if (outcome.kind === 'not_found') throw notFound('No API token with this id');
      if (outcome.kind === 'refused') {
        throw new ApiError(409, 'conflict', REFUSALS[outcome.reason], { reason: outcome.reason });
      }
      app.revocations.committed(tokenId);
      reply.code(201).header('cache-control', 'no-store');
      const replacement = (await app.tokenRepository.findToken(companyId, outcome.replacementId))!;
      return { ...replacement, token };
    },
  });
}
