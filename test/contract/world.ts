// The fixtures the contract tester fills requests from: the real app on a fresh database with the
// demo data set (companies with units, deleted units, locations, check-ins, revenue, sensor
// readings), so every response schema is exercised on real figures. Credentials of every kind the
// document's security schemes name, and the ids a request may carry, readable or not.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { TEST_JWT_SECRET, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { createDemoApp } from '../helpers/demo.js';
import { issueToken } from '../helpers/tokens.js';
import { fetchDocument, operationsOf, SchemaBook, type OpenApiDocument, type Operation } from './openapi.js';
import { createWebhookFixtures, type WebhookFixtures } from './webhooks.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface IssuedToken {
  id: string;
  token: string;
  scopes: string[];
  /** the units it is restricted to; empty: company-wide */
  units: number[];
}

export interface World {
  ctx: TestApp;
  document: OpenApiDocument;
  book: SchemaBook;
  operations: Operation[];
  /** the scopes the create body's schema enumerates */
  scopes: string[];
  /** the app clock's day, YYYY-MM-DD (UTC) */
  today: string;
  company: { id: number; liveUnits: number[]; deletedUnits: number[]; locations: number[] };
  other: { id: number; liveUnits: number[]; deletedUnits: number[]; locations: number[] };
  unitLocation: Map<number, number>;
  jwt: { employee: string; nonEmployee: string; expired: string; otherCompanyEmployee: string };
  tokens: { all: IssuedToken; restricted: IssuedToken; byScope: Map<string, IssuedToken>; revoked: IssuedToken };
  /** ids of the company's tokens that requests may act on (revoke, rotate); rotations add theirs */
  targets: string[];
  /** a token id of another company */
  otherCompanyTokenId: string;
  /** the company's webhook endpoints and deliveries requests may act on, and another company's */
  webhooks: WebhookFixtures;
  /** the key leak reports are signed with (LEAK_REPORT_PUBLIC_KEYS names its public half) */
  leakReportKey: { keyIdentifier: string; privateKey: KeyObject };
}

export async function createWorld(t: Teardown, options: TestAppOptions = {}): Promise<World> {
  const leakKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const leakReportKey = { keyIdentifier: 'contract-leak-report-key', privateKey: leakKeys.privateKey };
  const publicPem = leakKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const { ctx, demo } = await createDemoApp(
    t,
    {
      LEAK_REPORT_PUBLIC_KEYS: JSON.stringify([{ key_identifier: leakReportKey.keyIdentifier, key: publicPem }]),
      // the endpoints requests register point at the public internet: their events only queue
      WEBHOOK_DELIVERY: 'off',
    },
    options,
  );
  const [first, second] = demo.companies;
  if (!first || !second) throw new Error('the demo data set has fewer than two companies');
  const employeeOf = async (companyId: number) =>
    (
      await ctx.db.pool.query<{ id: number }>(
        "SELECT id FROM users WHERE company_id = $1 AND role = 'REGISTERED_EMPLOYEE' AND is_active ORDER BY id LIMIT 1",
        [companyId],
      )
    ).rows[0]!.id;
  const employeeId = await employeeOf(first.id);
  const otherEmployeeId = await employeeOf(second.id);
  const unitLocation = new Map(
    (await ctx.db.pool.query<{ id: number; location_id: number }>('SELECT id, location_id FROM cooling_units')).rows.map((row) => [
      row.id,
      row.location_id,
    ]),
  );

  const document = await fetchDocument(ctx.app);
  const book = new SchemaBook(document);
  const operations = operationsOf(document);
  const create = operations.find((operation) => operation.method === 'POST' && operation.path === '/api/v1/api-tokens');
  const scopesSchema = create?.body
    ? (book.deref(create.body).properties as Record<string, { items?: { enum?: string[] } }> | undefined)?.scopes
    : undefined;
  const scopes = scopesSchema?.items?.enum;
  if (!scopes?.length) throw new Error('the document does not enumerate the token scopes (POST /api/v1/api-tokens, scopes.items.enum)');

  const issue = async (employee: number, scopeList: string[], units: number[] = []): Promise<IssuedToken> => {
    const { id, token } = await issueToken(ctx, employee, {
      scopes: scopeList,
      cooling_unit_ids: units,
      name: `contract ${scopeList.join('+')}`,
    });
    return { id, token, scopes: scopeList, units };
  };
  const all = await issue(employeeId, scopes);
  const restricted = await issue(employeeId, scopes, [first.cooling_unit_ids[0]!]);
  const byScope = new Map<string, IssuedToken>();
  for (const scope of scopes) byScope.set(scope, await issue(employeeId, [scope]));
  const revoked = await issue(employeeId, scopes);
  const employee = await ctx.jwtFor(employeeId);
  // without a body, as documented; should that be refused, with `{}` (the conformance run reports the refusal)
  let revoke = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/api-tokens/${revoked.id}/revoke`,
    headers: { authorization: `Bearer ${employee}` },
  });
  if (revoke.statusCode !== 200) {
    revoke = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/api-tokens/${revoked.id}/revoke`,
      headers: { authorization: `Bearer ${employee}`, 'content-type': 'application/json' },
      payload: '{}',
    });
  }
  if (revoke.statusCode !== 200) throw new Error(`revoking a fixture token answered ${revoke.statusCode} ${revoke.body}`);
  const targets: string[] = [];
  for (let index = 0; index < 6; index++) targets.push((await issue(employeeId, scopes.slice(0, 1 + (index % scopes.length)))).id);
  const otherCompanyTokenId = (await issue(otherEmployeeId, scopes)).id;
  topUps.set(targets, (count) =>
    Promise.all(Array.from({ length: count }, (_, index) => issue(employeeId, scopes.slice(0, 1 + (index % scopes.length))))).then(
      (issued) => issued.map((token) => token.id),
    ),
  );

  const otherCompanyEmployee = await ctx.jwtFor(otherEmployeeId);
  const webhooks = await createWebhookFixtures(ctx, employee, otherCompanyEmployee);

  return {
    leakReportKey,
    ctx,
    document,
    book,
    operations,
    scopes,
    today: ctx.clock.now().toISOString().slice(0, 10),
    company: {
      id: first.id,
      liveUnits: first.cooling_unit_ids,
      deletedUnits: first.deleted_cooling_unit_ids,
      locations: first.location_ids,
    },
    other: {
      id: second.id,
      liveUnits: second.cooling_unit_ids,
      deletedUnits: second.deleted_cooling_unit_ids,
      locations: second.location_ids,
    },
    unitLocation,
    jwt: {
      employee,
      // the demo's non-employee: an operator of the first company, a valid JWT of a real user
      nonEmployee: first.non_employee_jwt,
      expired: await mintEmployeeJwt({
        secret: TEST_JWT_SECRET,
        userId: employeeId,
        now: new Date(ctx.clock.now().getTime() - 7200_000),
        ttlSeconds: 60,
      }),
      otherCompanyEmployee,
    },
    tokens: { all, restricted, byScope, revoked },
    targets,
    otherCompanyTokenId,
    webhooks,
  };
}

const topUps = new WeakMap<string[], (count: number) => Promise<string[]>>();

/** Issues `count` new tokens of the company and adds them to the targets (the most recent ones). */
export async function topUpTargets(world: World, count: number) {
  world.targets.push(...(await topUps.get(world.targets)!(count)));
}

/**
 * The scope a data endpoint needs: its topic, the last segment of its path naming a scope
 * (`/api/v1/analytics/revenue` -> revenue, sensor-data and sensor-data/changes -> sensor_data).
 */
export function scopeOf(world: World, operation: Operation): string {
  const segments = operation.path.split('/').filter(Boolean);
  const topic =
    segments.map((segment) => segment.replace(/-/g, '_')).findLast((segment) => world.scopes.includes(segment)) ?? segments.at(-1)!;
  if (!world.scopes.includes(topic))
    throw new Error(`${operation.id}: no scope named after its topic (${topic}) among ${world.scopes.join(', ')}`);
  return topic;
}
