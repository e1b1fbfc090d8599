// The API token as the management endpoints show it (never with the raw secret, except the
// creation response, which adds `token`).
import { z } from 'zod';
import { SCOPES } from '../../tokens/scopes.js';

export const apiToken = z
  .object({
    id: z.uuid(),
    name: z.string(),
    company_id: z.number().int(),
    scopes: z.array(z.enum(SCOPES)),
    cooling_unit_ids: z.array(z.number().int()).describe('Empty: company-wide access'),
    allowed_ips: z
      .array(z.string())
      .describe(
        'The networks the token may be used from, as canonical CIDR text (a single address is a /32 or /128); ' +
          'empty: any address. An IPv4 client, also one seen as IPv4-mapped (::ffff:a.b.c.d), matches the IPv4 networks only, ' +
          'and an IPv6 client the IPv6 networks only (::/0 admits no IPv4 client). A request from elsewhere is 403 ip_not_allowed.',
      ),
    expires_at: z.string().nullable().describe('ISO 8601 UTC; null: never expires'),
    last_used_at: z
      .string()
      .nullable()
      .describe('The last request made with the token, refused ones (a 429) included; accurate to within a minute; null before first use'),
    revoked: z.boolean(),
    revoked_at: z.string().nullable(),
    created_at: z.string(),
    created_by: z.number().int().describe('User id of the employee who created the token'),
    rotated_from: z.uuid().nullable().describe('The token this one replaced (rotate); null: created directly'),
    replaced_by: z.uuid().nullable().describe('The token that replaced this one (rotate); null: not rotated'),
  })
  .meta({ id: 'ApiToken' });

/** Its JSON, for the tests: a change of the schema breaks them at the type check. */
export type ApiTokenJson = z.infer<typeof apiToken>;

// No length limit here: any id that is not a UUID is a 404 (isTokenId), never a 400 that would
// tell a malformed id from an unknown one. The router's maxParamLength bounds the length.
export const tokenIdParams = z.object({
  token_id: z.string().describe('Token id (UUID)'),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A malformed id cannot name a token: it is a 404 like any other unknown id. */
export const isTokenId = (candidate: string) => UUID.test(candidate);
