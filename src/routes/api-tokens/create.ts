// POST /api/v1/api-tokens: a Registered Employee creates a token for their company. The raw
// token is in this response only; the database keeps its SHA-256.
import { z } from 'zod';
import { employeeOrigin } from '../../audit/origin.js';
import { invalidRequest } from '../../http/errors.js';
import { requireJsonBody } from '../../http/strict-json.js';
import { coolingUnitIdsField, distinct, errorResponses, isoInstant, onArray, trimmedText } from '../../http/schemas.js';
import { generateToken, hashToken } from '../../tokens/format.js';
import { SCOPES } from '../../tokens/scopes.js';
import type { App } from '../../types.js';
import { MAX_ALLOWED_IPS, parseAllowedIp } from '../../tokens/allowed-ips.js';
import { apiToken } from './schema.js';

// each entry becomes its canonical CIDR text, so `10.1.2.3` and `10.1.2.3/32` are one entry twice
const allowedIpsField = z
  .array(
    z.string().transform((entry, ctx) => {
      const parsed = parseAllowedIp(entry);
      if (parsed.ok) return parsed.cidr;
      ctx.addIssue({ code: 'custom', message: parsed.problem });
      return z.NEVER;
    }),
  )
  .max(MAX_ALLOWED_IPS, { error: `must list at most ${MAX_ALLOWED_IPS} entries`, ...onArray })
  .superRefine((cidrs, ctx) => {
    const first = new Map<string, number>();
    cidrs.forEach((cidr, index) => {
      const earlier = first.get(cidr);
      if (earlier === undefined) first.set(cidr, index);
      else ctx.addIssue({ code: 'custom', path: [index], message: `is ${cidr} again (allowed_ips.${earlier}): list each network once` });
    });
  })
  .default([])
  .describe(
    `IPv4 and IPv6 addresses and CIDRs the token may be used from, at most ${MAX_ALLOWED_IPS}, each once; an address is a /32 ` +
      '(IPv4) or /128 (IPv6), a CIDR must have no host bits set (10.1.0.0/16, not 10.1.2.3/16), an IPv4-mapped IPv6 entry ' +
      '(within ::ffff:0:0/96) is stored as IPv4. An IPv4 client, also one seen as ::ffff:a.b.c.d, matches the IPv4 entries ' +
      'only, and an IPv6 client the IPv6 entries only: ::/0 admits no IPv4 client. Empty or omitted: any address.',
  );

const body = z.strictObject({
  name: trimmedText(100).describe('Trimmed; 1..100 characters, no control characters'),
  scopes: z
    .array(z.enum(SCOPES))
    .min(1, { error: 'must name at least one scope', ...onArray })
    .refine(distinct, 'must not repeat a scope')
    .meta({ uniqueItems: true }),
  cooling_unit_ids: coolingUnitIdsField()
    .default([])
    .describe("Units the token is restricted to, each a live unit of the employee's company (else 400); empty or omitted: company-wide"),
  allowed_ips: allowedIpsField,
  expires_at: isoInstant()
    .nullable()
    .default(null)
    .describe('ISO 8601 with zone, in the future and before the year 10000 (UTC); null or omitted: never expires'),
});

// every expiry must print as a plain 4-digit-year ISO timestamp
const LATEST_EXPIRY = Date.UTC(9999, 11, 31, 23, 59, 59);

const created = apiToken.extend({ token: z.string().describe('The raw token, shown once') });
/** The 201's JSON, for the tests: a change of the schema breaks them at the type check. */
export type CreatedApiTokenJson = z.infer<typeof created>;

export default async function createApiToken(app: App) {
  app.post('/', {
    config: { carriesSecret: true },
    schema: {
      operationId: 'createApiToken',
      summary: 'Create an API token',
      tags: ['API tokens'],
      security: [{ employeeJwt: [] }],
      body,
      response: {
        201: created,
        ...errorResponses(400, 401, 403, 415, 429, 503),
      },
    },
    preParsing: requireJsonBody,
    handler: async (request, reply) => {
      const { companyId, userId } = request.employee;
      const now = app.clock.now();
      const { name, scopes, cooling_unit_ids: coolingUnitIds, allowed_ips: allowedIps } = request.body;

      const expiresAt = request.body.expires_at === null ? null : new Date(request.body.expires_at);
      if (expiresAt && expiresAt.getTime() <= now.getTime()) {
        throw invalidRequest('expires_at', 'expires_at must be in the future');
      }
      if (expiresAt && expiresAt.getTime() > LATEST_EXPIRY) {
        throw invalidRequest('expires_at', 'expires_at must be before the year 10000 (UTC); use null for a token that never expires');
      }
      if (coolingUnitIds.length > 0) {
        const live = await app.tokenRepository.liveUnitIds(companyId, coolingUnitIds);
        const unknown = coolingUnitIds.filter((id) => !live.has(id));
        if (unknown.length > 0) {
          throw invalidRequest('cooling_unit_ids', `Not a live cooling unit of your company: ${unknown.slice(0, 10).join(', ')}`);
        }
      }

      const token = generateToken();
      const record = await app.tokenRepository.createToken({
        companyId,
        createdBy: userId,
        name,
        scopes,
        coolingUnitIds,
        allowedIps,
        expiresAt,
        tokenHash: hashToken(token),
        now,
        origin: employeeOrigin(request),
      });
      reply.code(201).header('cache-control', 'no-store');
      return { ...record, token };
    },
  });
}
