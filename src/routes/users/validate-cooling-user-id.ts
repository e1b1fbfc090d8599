// POST /v1/users/validate-cooling-user-id/: public check that a farmer's "cooling user" code is
// valid. It answers {"valid": true|false} and nothing else: no name, no company, no reason.
// (Its 30/min per-IP rate limit is a separate concern, applied by the rate-limit plugin.)
import { z } from 'zod';
import { loadQueries } from '../../db/sql.js';
import { unsupportedMediaType } from '../../http/errors.js';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';

const sql = loadQueries('cooling-users', ['isActiveFarmerCode']);

const MAX_CODE_LENGTH = 64;
const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;
// length checks only on a string (see api-tokens/create.ts: zod measures anything with `length`)
const onString = { when: (payload: { value: unknown }) => typeof payload.value === 'string' };

const body = z.strictObject({
  cooling_user_id: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty', ...onString })
    .max(MAX_CODE_LENGTH, { error: `must be at most ${MAX_CODE_LENGTH} characters`, ...onString })
    // PostgreSQL refuses NUL in text (a 500); no user code holds a control character anyway
    .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters')
    .describe("The farmer's cooling user code"),
});

const answer = z.object({ valid: z.boolean() }).meta({ id: 'CoolingUserIdValidity' });

export default async function validateCoolingUserIdRoute(app: App) {
  app.post('/v1/users/validate-cooling-user-id/', {
    // its own limit, by client IP (the spec's validate_cooling_user_id_ip scope): applied in app.ts
    config: { ipRateLimit: 'validate_cooling_user_id_ip' },
    schema: {
      summary: "Check a farmer's cooling user code",
      description: 'True when an active farmer holds this code. Reveals nothing else. Rate-limited per client IP.',
      tags: ['Users'],
      security: [],
      body,
      response: { 200: answer, ...errorResponses(400, 415, 429, 503) },
    },
    // before body parsing: a form or text body is refused as a media type, not as a shape
    preParsing: async (request) => {
      if (!JSON_MEDIA_TYPE.test(request.headers['content-type'] ?? '')) throw unsupportedMediaType();
    },
    handler: async (request, reply) => {
      const { rows } = await app.db.query<{ valid: boolean }>(sql.isActiveFarmerCode, [request.body.cooling_user_id]);
      reply.header('cache-control', 'no-store');
      return { valid: rows[0]?.valid === true };
    },
  });
}
