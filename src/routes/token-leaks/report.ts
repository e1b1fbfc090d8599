// POST /api/v1/token-leaks: GitHub's secret scanning partner protocol. The body lists tokens found
// in public places; each is answered true_positive (a token this service issued, whatever its
// state) or false_positive (not ours: wrong shape or checksum, or no such token), and nothing
// else: not which company holds it. A live token is revoked with revoke's guarantee (0 requests
// accepted anywhere once this answers); every token of ours gets its leak in the audit trail. A
// replayed report answers the same labels and changes nothing: the tokens are revoked already and
// a sighting already recorded is not recorded again.
import { z } from 'zod';
import { reporterOrigin } from '../../audit/origin.js';
import { requireJsonBody } from '../../http/strict-json.js';
import { errorBody, errorResponses, onArray } from '../../http/schemas.js';
import { hashToken, isWellFormedToken } from '../../tokens/format.js';
import { revokeEverywhere } from '../../tokens/revoke-everywhere.js';
import type { App } from '../../types.js';

/** Matches one report may list: GitHub batches, and a bigger report is split by its sender. */
export const MAX_REPORTED_TOKENS = 1000;
/** The body's limit (the service's default is 64 KiB): 1000 matches with long URLs fit. */
export const REPORT_BODY_LIMIT = 1024 * 1024;
/** Who the trail names as the reporter: the protocol is GitHub's. */
const REPORTER = 'github';

/** Text without control characters (C0, DEL, C1): PostgreSQL's jsonb refuses NUL, and no URL holds one. */
const noControl = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\x00-\x1f\x7f-\x9f]*$/, 'must not contain control characters');

const reportedToken = z.strictObject({
  token: z.string().min(1).max(512).describe('The text that matched the token pattern'),
  type: noControl(200).describe('The name the token pattern was registered under'),
  url: noControl(4096).describe('The public URL where the token was found (may be empty)'),
  source: noControl(100).describe('Where on GitHub it was found: content, commit, issue_comment, npm, ...'),
});

const body = z
  .array(reportedToken)
  .min(1, { error: 'must list at least one token', ...onArray })
  .max(MAX_REPORTED_TOKENS, { error: `must list at most ${MAX_REPORTED_TOKENS} tokens`, ...onArray })
  .describe(`The tokens found (1..${MAX_REPORTED_TOKENS}); the body is signed as sent`);

const labels = z
  .array(
    z.object({
      token_raw: z.string(),
      token_type: z.string(),
      label: z.enum(['true_positive', 'false_positive']),
    }),
  )
  .describe('One entry per reported token, in the order reported')
  .meta({ id: 'TokenLeakLabels' });

export default async function reportTokenLeaks(app: App) {
  app.post('/', {
    bodyLimit: REPORT_BODY_LIMIT,
    // the per-IP public limit; the answer echoes the reported tokens: never compressed
    config: { ipRateLimit: 'public_write', carriesSecret: true },
    schema: {
      operationId: 'reportTokenLeaks',
      summary: 'Report leaked API tokens (GitHub secret scanning)',
      description:
        "GitHub's secret scanning partner protocol. The raw body must be signed (ECDSA P-256, SHA-256, DER in base64 in " +
        'Github-Public-Key-Signature) with the key named in Github-Public-Key-Identifier, one of LEAK_REPORT_PUBLIC_KEYS; ' +
        'a report that is not is 401 and changes nothing. A live token reported is revoked at once. ' +
        `Bodies up to 1 MiB. 404 when the deployment has leak reports off.`,
      tags: ['Leak reports'],
      security: [{ leakReportSignature: [] }],
      body,
      response: {
        200: labels,
        401: errorBody.describe('Not signed by a configured key: no or an unknown key identifier, or a bad signature'),
        404: errorBody.describe('Leak reports are off (LEAK_REPORT_PUBLIC_KEYS is unset)'),
        ...errorResponses(400, 415, 429, 503),
      },
    },
    preParsing: requireJsonBody,
    handler: async (request, reply) => {
      const reported = request.body;
      // shape and checksum offline: only a token that could be ours costs a lookup
      const hashes = new Map<string, Buffer>();
      for (const { token } of reported) if (isWellFormedToken(token)) hashes.set(token, hashToken(token));
      const found = await app.leakReports.tokensByHash([...hashes.values()]);
      const origin = reporterOrigin(request, REPORTER);
      const ours = new Set<string>();
      for (const { token, url, source } of reported) {
        const hash = hashes.get(token);
        const owner = hash && found.get(hash.toString('hex'));
        if (!owner) continue;
        const outcome = await revokeEverywhere(
          app,
          request.log,
          { companyId: owner.companyId, tokenId: owner.id },
          (announce) =>
            app.leakReports.recordLeak(
              owner.companyId,
              owner.id,
              { url: url === '' ? null : url, source },
              app.clock.now(),
              origin,
              announce,
            ),
          (result) => result?.revokedNow === true,
        );
        if (outcome) ours.add(token);
        if (outcome?.revokedNow) {
          app.metrics.leakedTokensRevoked.inc();
          request.log.warn({ tokenId: owner.id, signer: request.leakReportSigner }, 'leaked API token revoked');
        }
      }
      const answer = reported.map(({ token, type }) => ({
        token_raw: token,
        token_type: type,
        label: ours.has(token) ? ('true_positive' as const) : ('false_positive' as const),
      }));
      for (const { label } of answer) app.metrics.tokenLeakReports.inc({ label });
      reply.header('cache-control', 'no-store');
      return answer;
    },
  });
}
