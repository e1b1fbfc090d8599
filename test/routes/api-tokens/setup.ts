// Shared world for the API-token route tests: the real app on a fresh database with two
// companies (A and B), each with a Registered Employee JWT, plus small request helpers.
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createCompany, type CompanyFixture } from '../../helpers/fixtures.js';

export const BASE = '/api/v1/api-tokens';
export const SCOPES = ['users', 'utilization', 'revenue', 'impact', 'sensor_data'] as const;
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TOKEN_PATTERN = /^ctk_[0-9A-Za-z]{49}$/;
export const API_TOKEN_KEYS = [
  'allowed_ips',
  'company_id',
  'cooling_unit_ids',
  'created_at',
  'created_by',
  'expires_at',
  'id',
  'last_used_at',
  'name',
  'replaced_by',
  'revoked',
  'revoked_at',
  'rotated_from',
  'scopes',
];

// the shapes the routes answer with, taken from their zod schemas: a schema change breaks the tests
// at the type check rather than leaving a hand-written copy to drift
import type { CreatedApiTokenJson as CreatedToken } from '../../../src/routes/api-tokens/create.js';
export type { ApiTokenJson } from '../../../src/routes/api-tokens/schema.js';
export type { ApiTokenListJson as ListJson } from '../../../src/routes/api-tokens/list.js';
export type { ErrorJson } from '../../../src/http/schemas.js';
export type { CreatedToken };

export interface Company extends CompanyFixture {
  jwt: string;
}

export interface World extends TestApp {
  a: Company;
  b: Company;
  /** POST a JSON body (or a raw string with its own content type) as `jwt`. */
  post(jwt: string | null, url: string, payload?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  get(jwt: string | null, url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Creates a token through the API and fails loudly if that does not answer 201. */
  createToken(jwt: string, body?: Record<string, unknown>): Promise<CreatedToken>;
  /** Rows in api_tokens (all companies): proves a refused request created nothing. */
  tokenCount(): Promise<number>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const bearer = (jwt: string | null): Record<string, string> => (jwt === null ? {} : { authorization: `Bearer ${jwt}` });

export async function createWorld(t: Teardown, env: Record<string, string> = {}): Promise<World> {
  const test = await createTestApp(t, env);
  const companyA = await createCompany(test.db.pool, 'Alpha Cold');
  const companyB = await createCompany(test.db.pool, 'Beta Cold');
  // a long-lived JWT: tests move the clock by minutes or days
  const jwtFor = (userId: number) => test.jwtFor(userId, { ttlSeconds: 30 * 24 * 3600 });
  const a = { ...companyA, jwt: await jwtFor(companyA.employeeId) };
  const b = { ...companyB, jwt: await jwtFor(companyB.employeeId) };

  const post: World['post'] = (jwt, url, payload, headers = {}) =>
    test.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(jwt), ...headers },
      ...(payload === undefined ? {} : { payload: payload as string | object }),
    });
  const get: World['get'] = (jwt, url, headers = {}) => test.app.inject({ method: 'GET', url, headers: { ...bearer(jwt), ...headers } });

  return {
    ...test,
    a,
    b,
    post,
    get,
    async createToken(jwt, body = {}) {
      const response = await post(jwt, BASE, { name: 'Partner ETL', scopes: ['users'], ...body });
      if (response.statusCode !== 201) {
        throw new Error(`create answered ${response.statusCode}: ${response.body}`);
      }
      return response.json<CreatedToken>();
    },
    async tokenCount() {
      const { rows } = await test.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens');
      return rows[0]!.n;
    },
  };
}

/** A random JSON value: scalars of every type, odd strings, nested arrays and objects. */
export function randomJson(random: () => number, depth = 0): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const kind = Math.floor(random() * (depth > 2 ? 6 : 8));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick([0, -1, 1, 1.5, -0.5, 2 ** 31, 2 ** 31 - 1, -(2 ** 31), 2 ** 53, 2 ** 53 + 2, 1e308, -1e308, 5e-324]);
    case 3:
      return Math.floor((random() - 0.5) * 2 ** 40);
    case 4:
      return pick([
        '',
        ' ',
        'users',
        'sensor_data',
        '1',
        '-1',
        'null',
        '\u0000',
        '\u0000users',
        'a\u0001b',
        '\ud800',
        '\udfff\ud800',
        '\u202e',
        '🌽'.repeat(60),
        "'; DROP TABLE api_tokens; --",
        '{"$gt": ""}',
        '2030-01-01T00:00:00Z',
        '9999-12-31T23:59:59-23:59',
        '0001-01-01T00:00:00Z',
        '2030-02-29T00:00:00Z',
        'x'.repeat(5000),
      ]);
    case 5: {
      const length = Math.floor(random() * 20);
      let text = '';
      for (let i = 0; i < length; i++) text += String.fromCharCode(Math.floor(random() * 0xffff));
      return text;
    }
    case 6:
      return Array.from({ length: Math.floor(random() * 5) }, () => randomJson(random, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 4); i > 0; i--) {
        object[pick(['name', 'scopes', 'a', '$where', 'length', 'toString', 'valueOf'])] = randomJson(random, depth + 1);
      }
      return object;
    }
  }
}

/** A random string shaped like an ISO timestamp (digits anywhere), with and without a zone. */
export function randomTimestampLike(random: () => number): string {
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
  const zone = ['Z', '+' + digits(2) + ':' + digits(2), '-' + digits(2) + ':' + digits(2), '', 'z'][Math.floor(random() * 5)]!;
  const fraction = random() < 0.3 ? '.' + digits(1 + Math.floor(random() * 9)) : '';
  const year = random() < 0.5 ? String(2026 + Math.floor(random() * 8000)).padStart(4, '0') : digits(4);
  return `${year}-${digits(2)}-${digits(2)}T${digits(2)}:${digits(2)}:${digits(2)}${fraction}${zone}`;
}

/** The ways a client sends a call that needs no body (revoke, rotate): [label, headers, payload]. */
export const EMPTY_BODIES = [
  ['no body, no content type', {}, undefined],
  ['empty object', { 'content-type': 'application/json' }, '{}'],
  ['JSON content type, empty body', { 'content-type': 'application/json' }, ''],
  ['JSON content type, no body', { 'content-type': 'application/json' }, undefined],
] as const;

// the route tests fuzz with it (test/helpers/random.ts)
export { seededRandom } from '../../helpers/random.js';
