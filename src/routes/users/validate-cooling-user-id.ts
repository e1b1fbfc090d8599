// POST /v1/users/validate-cooling-user-id/: public check that a farmer's "cooling user" code is
// valid. It answers {"valid": true|false} and nothing else: no name, no company, no reason.
// (Its 30/min per-IP rate limit is a separate concern, applied by the rate-limit plugin.)
import { z } from 'zod';
import { loadQueries } from '../../db/sql.js';
import { requireJsonBody } from '../../http/strict-json.js';
import { errorResponses, trimmedText } from '../../http/schemas.js';
import type { App } from '../../types.js';

const sql = loadQueries('cooling-users', ['isActiveFarmerCode']);

const MAX_CODE_LENGTH = 64;

const body = z.strictObject({
  // PostgreSQL refuses NUL in text (a 500); no user code holds a control character anyway
  cooling_user_id: trimmedText(MAX_CODE_LENGTH).describe(`The farmer's cooling user code; trimmed, 1..${MAX_CODE_LENGTH} characters`),
});

const answer = z.object({ valid: z.boolean() }).meta({ id: 'CoolingUserIdValidity' });

export default async function validateCoolingUserIdRoute(app: App) {
  app.post('/v1/users/validate-cooling-user-id/', {
    // its own limit, by client IP (the spec's validate_cooling_user_id_ip scope): applied in app.ts
    config: { ipRateLimit: 'validate_cooling_user_id_ip' },
    schema: {
      operationId: 'validateCoolingUserId',
      summary: "Check a farmer's cooling user code",
      description: 'True when an active farmer holds this code. Reveals nothing else. Rate-limited per client IP.',
      tags: ['Users'],
      security: [],
      body,
      response: { 200: answer, ...errorResponses(400, 415, 429, 503) },
    },
    preParsing: requireJsonBody,
    handler: async (request, reply) => {
      const { rows } = await app.db.query<{ valid: boolean }>(sql.isActiveFarmerCode, [request.body.cooling_user_id]);
      reply.header('cache-control', 'no-store');
      return { valid: rows[0]?.valid === true };
    },
  });
}
