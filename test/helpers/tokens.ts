// Issues API tokens through the real management endpoint, as an employee would.
import type { CreatedApiTokenJson } from '../../src/routes/api-tokens/create.js';
import type { ApiTokenJson } from '../../src/routes/api-tokens/schema.js';
import type { TestApp } from './app.js';

/** A token's JSON as the routes' schemas say, the raw secret only in a creation's or a rotation's answer. */
export type TokenJson = ApiTokenJson & Partial<Pick<CreatedApiTokenJson, 'token'>>;

export interface IssueOptions {
  scopes?: string[];
  cooling_unit_ids?: number[];
  expires_at?: string | null;
  name?: string;
}

export const ALL_SCOPES = ['users', 'utilization', 'revenue', 'impact', 'sensor_data'];

export async function issueToken(ctx: TestApp, employeeId: number, options: IssueOptions = {}) {
  const response = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/api-tokens',
    headers: { authorization: `Bearer ${await ctx.jwtFor(employeeId)}`, 'content-type': 'application/json' },
    payload: {
      name: options.name ?? 'test token',
      scopes: options.scopes ?? ALL_SCOPES,
      cooling_unit_ids: options.cooling_unit_ids ?? [],
      expires_at: options.expires_at ?? null,
    },
  });
  if (response.statusCode !== 201) throw new Error(`token creation failed: ${response.statusCode} ${response.body}`);
  const body = response.json() as { id: string; token: string };
  return { id: body.id, token: body.token, headers: { authorization: `Bearer ${body.token}` } };
}
