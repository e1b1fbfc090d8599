// The webhook-endpoint routes as the contract tester models them (docs/webhooks.md): the world's
// endpoints and deliveries to act on, the values a request may carry (https URLs, descriptions, a
// replay's since, endpoint and delivery ids), the body rules a schema cannot carry, and what the
// contract answers: the company's endpoint succeeds, another's or an unknown one is 404, a
// delivery must be one of that endpoint's, a company has at most 20 endpoints (409).
import { isIP } from 'node:net';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { addressProblem, checkUrlShape, RefusedUrl } from '../../src/webhooks/address-policy.js';
import type { TestApp } from '../helpers/app.js';
import { codePoints, dateTime, recentOf } from './arbitraries.js';
import type { Example } from './examples.js';
import type { Violation } from './expectations.js';
import type { Operation, Schema } from './openapi.js';
import type { World } from './world.js';

export const WEBHOOKS_PATH = '/api/v1/webhook-endpoints';
/** docs/webhooks.md: "A company has at most 20 endpoints" */
const MAX_ENDPOINTS = 20;
/** docs/webhooks.md: events are kept 30 days, and a replay reaches that far back */
const REPLAY_DAYS = 30;
const DAY_MS = 86_400_000;
/** the contract world sets no WEBHOOK_ALLOWED_NETWORKS: no network is exempt, http goes nowhere */
const NO_ALLOWED_NETWORKS = [] as const;
const MAX_DESCRIPTION = 500;

export interface WebhookFixtures {
  /** the company's endpoints, every one it ever had: the world's, top-ups, created by requests */
  targets: string[];
  /** those of the targets a request deleted since */
  removed: Set<string>;
  /** a delivery (of a test event) of each endpoint the world registered */
  deliveries: Array<{ endpoint_id: string; delivery_id: string }>;
  otherCompanyEndpointId: string;
  otherCompanyDeliveryId: string;
}

export const isWebhookOperation = (operation: Operation) => operation.path.startsWith(WEBHOOKS_PATH);

/** An endpoint registered through the API, with a webhook.test event queued for it (WEBHOOK_DELIVERY=off: never sent). */
async function register(ctx: TestApp, jwt: string, index: number) {
  const authorization = `Bearer ${jwt}`;
  const created = await ctx.app.inject({
    method: 'POST',
    url: WEBHOOKS_PATH,
    headers: { authorization, 'content-type': 'application/json' },
    payload: {
      url: `https://8.8.8.8/coldtrack-contract/${index}`,
      event_types: ['webhook_endpoint.disabled'],
      description: 'contract world',
    },
  });
  if (created.statusCode !== 201) throw new Error(`registering a fixture endpoint answered ${created.statusCode} ${created.body}`);
  const endpointId = created.json<{ id: string }>().id;
  const tested = await ctx.app.inject({ method: 'POST', url: `${WEBHOOKS_PATH}/${endpointId}/test`, headers: { authorization } });
  if (tested.statusCode !== 202) throw new Error(`a fixture endpoint's test event answered ${tested.statusCode} ${tested.body}`);
  const log = await ctx.app.inject({ method: 'GET', url: `${WEBHOOKS_PATH}/${endpointId}/deliveries`, headers: { authorization } });
  const delivery = log.json<{ data?: Array<{ id: number }> }>().data?.[0];
  if (!delivery) throw new Error(`a fixture endpoint's delivery log answered ${log.statusCode} ${log.body}`);
  return { endpoint_id: endpointId, delivery_id: String(delivery.id) };
}

export async function createWebhookFixtures(ctx: TestApp, employee: string, otherCompanyEmployee: string): Promise<WebhookFixtures> {
  // the generated endpoints point at public addresses of the internet: nothing may be sent there
  if (ctx.config.webhooks.deliver) throw new Error('the contract world must run with WEBHOOK_DELIVERY=off');
  const deliveries = [];
  for (let index = 0; index < 6; index++) deliveries.push(await register(ctx, employee, index));
  const other = await register(ctx, otherCompanyEmployee, 0);
  return {
    targets: deliveries.map((delivery) => delivery.endpoint_id),
    removed: new Set(),
    deliveries,
    otherCompanyEndpointId: other.endpoint_id,
    otherCompanyDeliveryId: other.delivery_id,
  };
}

const liveEndpoints = (fixtures: WebhookFixtures) => fixtures.targets.length - fixtures.removed.size;

/**
 * Endpoints to act on before an operation's requests: before creation, all but room for a few
 * (the rest meet the company's limit, 409); before the routes of one endpoint, a few new ones, as
 * DELETE removes some.
 */
export async function prepareWebhooks(world: World, operation: Operation) {
  if (operation.method === 'POST' && operation.path === WEBHOOKS_PATH)
    await topUpEndpoints(world, MAX_ENDPOINTS - 4 - liveEndpoints(world.webhooks));
  else if (operation.parameters.some((parameter) => parameter.name === 'endpoint_id')) await topUpEndpoints(world, 4);
}

/** Registers up to `count` new endpoints of the company (as many as its 20 leave room for), each with a delivery. */
export async function topUpEndpoints(world: World, count: number) {
  const fixtures = world.webhooks;
  const room = Math.min(count, MAX_ENDPOINTS - liveEndpoints(fixtures));
  for (let index = 0; index < room; index++) {
    const made = await register(world.ctx, world.jwt.employee, fixtures.targets.length);
    fixtures.targets.push(made.endpoint_id);
    fixtures.deliveries.push(made);
  }
}

/** The state moves on: an endpoint a request created is the company's, one it deleted is gone. */
export function noteWebhookAnswer(world: World, example: Example, response: LightMyRequestResponse) {
  const { operation } = example;
  if (operation.method === 'POST' && operation.path === WEBHOOKS_PATH && response.statusCode === 201)
    world.webhooks.targets.push(response.json<{ id: string }>().id);
  if (operation.method === 'DELETE' && isWebhookOperation(operation) && response.statusCode === 204)
    world.webhooks.removed.add(example.path.endpoint_id!.toLowerCase());
}

const octet = fc.nat({ max: 255 });
const hextet = fc.nat({ max: 0xffff }).map((group) => group.toString(16));
/** Addresses the service sends to: unicast of the public internet (its own reading, address-policy.ts) */
const publicHost = fc
  .oneof(
    { arbitrary: fc.tuple(octet, octet, octet, octet).map((octets) => octets.join('.')), weight: 3 },
    fc.tuple(fc.integer({ min: 0x2001, max: 0x3fff }), hextet, hextet).map(([a, b, c]) => `${a.toString(16)}:${b}::${c}`),
  )
  .filter((address) => addressProblem(address, NO_ALLOWED_NETWORKS) === null)
  .map((address) => (isIP(address) === 6 ? `[${address}]` : address));
const publicUrl = fc
  .record({
    host: publicHost,
    port: fc.constantFrom('', ':443', ':8443'),
    path: fc.array(fc.stringMatching(/^[a-z0-9_-]{1,12}$/), { maxLength: 3 }).map((segments) => `/${segments.join('/')}`),
    query: fc.constantFrom('', '?source=coldtrack'),
  })
  .map(({ host, port, path, query }) => `https://${host}${port}${path}${query}`);
/** One way each that a URL is refused: scheme, credentials, fragment, a non-public address, a name, not a URL */
const refusedUrl = fc.oneof(
  publicUrl.map((url) => url.replace(/^https:/, 'http:')),
  publicUrl.map((url) => url.replace('https://', 'https://partner:secret@')),
  publicUrl.map((url) => `${url}#events`),
  fc.constantFrom(
    'https://10.1.2.3/hook',
    'https://127.0.0.1:8443/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[fd00::1]/hook',
    'https://100.64.0.1/hook',
    'https://192.168.1.10/hook',
    'https://0.0.0.0/hook',
    'https://[::ffff:10.0.0.1]/hook',
    'https://224.0.0.1/hook',
    'https://203.0.113.7/hook',
  ),
  // reserved names (RFC 2606) resolve nowhere; localhost resolves to loopback
  fc.constantFrom('https://hooks.partner.example/coldtrack', 'https://receiver.invalid:8443/x', 'https://localhost/hook'),
  fc.constantFrom('ftp://8.8.8.8/hook', '8.8.8.8/hook', '//8.8.8.8/hook', 'https://'),
);

const descriptionProblem = (text: string) => {
  const trimmed = text.trim();
  if (codePoints(trimmed) > MAX_DESCRIPTION) return `${codePoints(trimmed)} characters once trimmed (at most ${MAX_DESCRIPTION})`;
  return /\p{Cc}/u.test(trimmed) ? 'a control character' : null;
};
const acceptedDescription = fc
  .oneof(
    fc.string({ maxLength: 80 }),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.constantFrom('x'.repeat(MAX_DESCRIPTION), ` ${'é'.repeat(MAX_DESCRIPTION)}\n`, '\tpadded\r\n'),
  )
  .filter((text) => descriptionProblem(text) === null);
const refusedDescription = fc.constantFrom(
  'x'.repeat(MAX_DESCRIPTION + 1),
  '😀'.repeat(MAX_DESCRIPTION + 1),
  'a\u0007b',
  'two\nlines',
  'a\u0085',
  '\u0000',
);

/**
 * Values for the webhook routes' parameters and fields: `contract` ones break no rule (ids of the
 * company's endpoints and their deliveries, public https URLs, a since within the window),
 * `document` ones now and then break one.
 */
export function webhookValue(world: World, mode: 'document' | 'contract', path: string): fc.Arbitrary<unknown> | null {
  const fixtures = world.webhooks;
  const now = world.ctx.clock.now().getTime();
  // contract: what breaks no rule; document: now and then something else
  const either = (accepted: fc.Arbitrary<unknown>, others: fc.Arbitrary<unknown>) =>
    mode === 'contract' ? accepted : fc.oneof({ arbitrary: accepted, weight: 3 }, others);
  switch (path) {
    case 'path:endpoint_id':
      return either(
        recentOf(fixtures.targets),
        fc.oneof(
          fc.constant(fixtures.otherCompanyEndpointId),
          fc.uuid(),
          // the same id in capitals: still the company's endpoint
          recentOf(fixtures.targets).map((id) => id.toUpperCase()),
        ),
      );
    case 'path:delivery_id':
      return either(
        recentOf(fixtures.deliveries).map((delivery) => delivery.delivery_id),
        fc.oneof(
          fc.constant(fixtures.otherCompanyDeliveryId),
          recentOf(fixtures.deliveries).map((delivery) => `0${delivery.delivery_id}`),
          fc.integer({ min: 1, max: 0x7fffffff }).map(String),
        ),
      );
    case 'url':
      return either(publicUrl, refusedUrl);
    case 'description':
      return either(acceptedDescription, refusedDescription);
    case 'since': {
      // whole seconds inside the window: a generated fraction of a second stays in it
      const window = dateTime(new Date(now - REPLAY_DAYS * DAY_MS + 1000), new Date(now - 1000));
      return either(
        window,
        fc.oneof(dateTime(new Date(now - 40 * DAY_MS), new Date(now - REPLAY_DAYS * DAY_MS - 1000)), dateTime(new Date(now + 1000))),
      );
    }
    default:
      return null;
  }
}

/** An endpoint and one of its deliveries, for the routes that name both (a replay of one delivery). */
export const deliveryPaths = (world: World) =>
  recentOf(world.webhooks.deliveries).map((delivery) => ({ ...delivery }) as Record<string, string>);

/** Why the service does not take the URL (the contract world: no allowed network), or null. */
function urlProblem(text: string): { problem: string; stated: RegExp[] } | null {
  let url: URL;
  try {
    url = checkUrlShape(text);
  } catch (error) {
    if (!(error instanceof RefusedUrl)) throw error;
    // the rule it broke, read from the service's reason: the document states that one or not
    const stated = /password/.test(error.message)
      ? [/user name/, /password/]
      : /fragment/.test(error.message)
        ? [/fragment/]
        : [/https URL/];
    return { problem: error.message, stated };
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // no name resolves on this machine (no DNS), and the generated ones are reserved names or
  // localhost: a name resolves to no public address
  if (!isIP(host)) return { problem: `its host ${host} is a name that resolves to no public address`, stated: [/resolve/] };
  const problem = addressProblem(host, NO_ALLOWED_NETWORKS);
  if (problem) return { problem, stated: [/public addresses/] };
  if (url.protocol !== 'https:') return { problem: 'http, to no allowed network', stated: [/https URL/] };
  return null;
}

/** The webhook routes' rules beyond their schemas that a document-valid body breaks. */
export function webhookBodyViolations(world: World, operation: Operation, object: Schema, body: Record<string, unknown>): Violation[] {
  const violations: Violation[] = [];
  const properties = (object.properties ?? {}) as Record<string, Schema>;
  const described = (name: string) => String(properties[name]?.description ?? '');
  const rule = (field: string, text: string, stated: boolean, gap: string) =>
    violations.push({
      field,
      rule: text,
      ...(stated ? {} : { gap: `src: ${operation.id}: ${gap}, and the document only says "${described(field)}"` }),
    });
  if (typeof body.url === 'string') {
    const refused = urlProblem(body.url);
    if (refused)
      rule(
        'url',
        `url ${JSON.stringify(body.url).slice(0, 80)}: ${refused.problem}`,
        refused.stated.every((pattern) => pattern.test(described('url'))),
        `the service refuses a url that ${refused.problem}`,
      );
  }
  if (typeof body.description === 'string') {
    const problem = descriptionProblem(body.description);
    if (problem)
      rule(
        'description',
        `description: ${problem}`,
        [/500 characters/, /control characters/, /trimmed/].every((pattern) => pattern.test(described('description'))),
        `a description is at most 500 characters once trimmed, without control characters`,
      );
  }
  if (operation.method === 'PATCH' && Object.keys(body).length === 0) {
    violations.push({
      field: 'body',
      rule: 'an update that changes nothing',
      ...(/at least one/.test(String(object.description ?? ''))
        ? {}
        : { gap: `src: ${operation.id}: an empty update ({}) is refused, and the document does not say a field is needed` }),
    });
  }
  if (typeof body.since === 'string') {
    const since = Date.parse(body.since);
    const now = world.ctx.clock.now().getTime();
    if (Number.isFinite(since) && (since < now - REPLAY_DAYS * DAY_MS || since > now))
      rule(
        'since',
        `since ${body.since}: not within the last ${REPLAY_DAYS} days`,
        new RegExp(`within the last ${REPLAY_DAYS} days`).test(described('since')),
        `since must be within the last ${REPLAY_DAYS} days`,
      );
  }
  return violations;
}

/** What the contract answers to a request of a webhook route that breaks no rule. */
export async function webhookOutcome(world: World, example: Example, success: number[]): Promise<{ statuses: number[]; why: string }> {
  const fixtures = world.webhooks;
  const id = example.path.endpoint_id?.toLowerCase();
  if (id === undefined) {
    if (example.operation.method !== 'POST') return { statuses: success, why: "the company's endpoints" };
    const live = liveEndpoints(fixtures);
    return live >= MAX_ENDPOINTS
      ? { statuses: [409], why: `the company has ${live} endpoints, the most it may` }
      : { statuses: success, why: `the company has ${live} endpoints` };
  }
  if (!fixtures.targets.includes(id))
    return { statuses: [404], why: id === fixtures.otherCompanyEndpointId ? "another company's endpoint" : 'no such endpoint' };
  if (fixtures.removed.has(id)) return { statuses: [404], why: 'an endpoint of the company, deleted since' };
  const deliveryId = example.path.delivery_id;
  if (deliveryId === undefined) return { statuses: success, why: 'an endpoint of the company' };
  // the endpoint's log as it stands (test events and replays add deliveries the world does not track)
  const log = await world.ctx.app.inject({
    method: 'GET',
    url: `${WEBHOOKS_PATH}/${id}/deliveries?page_size=1000`,
    headers: { authorization: `Bearer ${world.jwt.employee}` },
  });
  const listed = (log.json<{ data?: Array<{ id: number }> }>().data ?? []).some((delivery) => String(delivery.id) === deliveryId);
  return listed
    ? { statuses: success, why: "a delivery in the endpoint's log" }
    : {
        statuses: [404],
        why: deliveryId === fixtures.otherCompanyDeliveryId ? "another company's delivery" : "not a delivery in the endpoint's log",
      };
}
