// The stateful links of the webhook-endpoint resource, driven by fast-check as the token's are
// (links.ts): create (a generated valid body) -> retrieve -> list -> test event -> the delivery
// log holds it -> replay it -> rotate the secret (a generated grace period) -> retrieve -> test
// event -> disable -> replay since -> enable -> delete -> retrieve, log, rotate and test are 404.
// Every answer goes through the same conformance checks as the generated requests, and the state
// must read consistently from step to step (the same object, the secret only where it is shown,
// the deliveries in their endpoint's log). The world runs with WEBHOOK_DELIVERY=off: nothing is
// sent, so a delivery stays pending at its first attempt.
import fc from 'fast-check';
import type { Test } from 'tap';
import type { WebhookDeliveryJson, WebhookEndpointJson } from '../helpers/webhooks.js';
import { validValue } from './arbitraries.js';
import { validRequest } from './examples.js';
import { expectValid } from './expectations.js';
import { type ChainCall, linkChain } from './link-chain.js';
import type { Operation } from './openapi.js';
import { WEBHOOKS_PATH } from './webhooks.js';
import type { World } from './world.js';

const DEFAULT_GRACE_SECONDS = 86_400;
const MAX_ENDPOINTS = 20;

type Answer = WebhookEndpointJson & { data?: Array<WebhookEndpointJson & WebhookDeliveryJson>; message_id?: string; replayed?: number };

export async function runWebhookLinks(t: Test, world: World, options: { seed: number; numRuns: number }) {
  const find = (method: string, path: string) =>
    world.operations.find((operation) => operation.method === method && operation.path === `${WEBHOOKS_PATH}${path}`);
  const operations = {
    create: find('POST', ''),
    list: find('GET', ''),
    retrieve: find('GET', '/{endpoint_id}'),
    update: find('PATCH', '/{endpoint_id}'),
    remove: find('DELETE', '/{endpoint_id}'),
    rotate: find('POST', '/{endpoint_id}/rotate-secret'),
    test: find('POST', '/{endpoint_id}/test'),
    deliveries: find('GET', '/{endpoint_id}/deliveries'),
    replayOne: find('POST', '/{endpoint_id}/deliveries/{delivery_id}/replay'),
    replaySince: find('POST', '/{endpoint_id}/replay'),
  };
  for (const [name, operation] of Object.entries(operations)) t.ok(operation, `the document has the webhook ${name} operation`);
  const { create, list, retrieve, update, remove, rotate, test, deliveries, replayOne, replaySince } = operations;
  if (!create || !list || !retrieve || !update || !remove || !rotate || !test || !deliveries || !replayOne || !replaySince) return;

  const { expect, call: send_, status, same, started, report } = linkChain(world);
  const employee = { authorization: `Bearer ${world.jwt.employee}` };
  const call = async (step: string, operation: Operation, init: ChainCall) => {
    const { response, body } = await send_<Answer | undefined>(step, operation, init);
    return { response, body: body ?? ({} as Answer) };
  };
  const logOf = async (step: string, id: string) => {
    const log = await call(step, deliveries, { path: { endpoint_id: id }, query: [['page_size', '100']] });
    status(step, log.response, 200);
    return log.body.data ?? [];
  };
  /** Room for one more endpoint: the operations' tests before may have filled the company's 20. */
  const makeRoom = async () => {
    const fixtures = world.webhooks;
    const live = fixtures.targets.filter((id) => !fixtures.removed.has(id));
    for (const id of live.slice(0, Math.max(0, live.length - (MAX_ENDPOINTS - 1)))) {
      const deleted = await world.ctx.app.inject({ method: 'DELETE', url: `${WEBHOOKS_PATH}/${id}`, headers: employee });
      if (deleted.statusCode !== 204) throw new Error(`making room: DELETE answered ${deleted.statusCode} ${deleted.body}`);
      fixtures.removed.add(id);
    }
  };

  const graceBody = rotate.body ? validValue(world.book, rotate.body) : fc.constant(null);
  await fc.assert(
    fc.asyncProperty(validRequest(world, create, 'contract'), graceBody, async (creation, grace) => {
      const expectation = await expectValid(world, creation);
      fc.pre(expectation.violations.length === 0);
      started();
      await makeRoom();
      const input = creation.bodyValue as { url: string; event_types: string[]; description?: string; cooling_unit_ids?: number[] };

      // create: what was asked, enabled, the secret shown once
      const created = await call('create', create, { body: input });
      status('create', created.response, 201);
      if (created.response.statusCode !== 201) return;
      const endpoint = created.body;
      world.webhooks.targets.push(endpoint.id);
      same('create: the url, as a URL reads it', endpoint.url, new URL(input.url).href);
      same('create: the description, trimmed', endpoint.description, (input.description ?? '').trim());
      same('create: the event types', [...endpoint.event_types].sort(), [...input.event_types].sort());
      same(
        'create: the units',
        endpoint.cooling_unit_ids,
        [...new Set(input.cooling_unit_ids ?? [])].sort((a, b) => a - b),
      );
      same(
        'create: enabled, one secret',
        [endpoint.enabled, endpoint.disabled_reason, endpoint.disabled_at, endpoint.previous_secret_expires_at],
        [true, null, null, null],
      );
      expect('create: the signing secret', /^whsec_[A-Za-z0-9+/]{43}=$/.test(endpoint.secret ?? ''), () => String(endpoint.secret));
      expect('create: the Location header names it', created.response.headers.location === `${WEBHOOKS_PATH}/${endpoint.id}`, () =>
        String(created.response.headers.location),
      );
      const { secret, ...stored } = endpoint;
      const path = { endpoint_id: endpoint.id };

      // retrieve and list: the created object, without its secret
      const retrieved = await call('retrieve', retrieve, { path });
      status('retrieve', retrieved.response, 200);
      same('retrieve: the created object, without the secret', retrieved.body, stored);
      const listed = await call('list', list, { query: [['page_size', '100']] });
      status('list', listed.response, 200);
      same(
        'list: the created object, without the secret',
        listed.body.data?.find((item) => item.id === endpoint.id),
        stored,
      );
      same('a new endpoint: an empty delivery log', await logOf("the new endpoint's log", endpoint.id), []);

      // a test event: in the endpoint's log, pending at its first attempt (nothing is sent here)
      const tested = await call('test', test, { path });
      status('test', tested.response, 202);
      const [first, ...others] = await logOf('the log after a test', endpoint.id);
      same(
        'the log after a test: one webhook.test delivery, by the message id the test answered, not tried yet',
        [
          others.length,
          first?.message_id,
          first?.event_type,
          first?.status,
          first?.attempts,
          first?.interrupted_attempts,
          first?.last_attempt,
        ],
        [0, tested.body.message_id, 'webhook.test', 'pending', 0, 0, null],
      );
      if (!first) return;
      const replayed = await call('replay the delivery', replayOne, { path: { ...path, delivery_id: String(first.id) } });
      status('replay the delivery', replayed.response, 202);
      const [again] = await logOf('the log after a replay', endpoint.id);
      same(
        'the log after a replay: the same delivery, pending from its first attempt',
        { ...again, next_attempt_at: null },
        { ...first, next_attempt_at: null },
      );
      same('the log after a replay: due now', Date.parse(again?.next_attempt_at ?? ''), world.ctx.clock.now().getTime());

      // rotate: a new secret, the old one signing on until the grace period ends
      const seconds =
        grace && typeof grace === 'object' && 'grace_period_seconds' in grace
          ? Number((grace as { grace_period_seconds: number }).grace_period_seconds)
          : DEFAULT_GRACE_SECONDS;
      const rotated = await call('rotate the secret', rotate, { path, ...(grace !== null ? { body: grace } : {}) });
      status('rotate the secret', rotated.response, 200);
      const now = world.ctx.clock.now().getTime();
      const { secret: rotatedSecret, ...afterRotation } = rotated.body;
      expect('rotate the secret: a new secret', /^whsec_/.test(rotatedSecret ?? '') && rotatedSecret !== secret, () =>
        String(rotatedSecret),
      );
      same(
        'rotate the secret: the previous one signs until the grace period ends',
        Date.parse(afterRotation.previous_secret_expires_at ?? ''),
        now + seconds * 1000,
      );
      same(
        'rotate the secret: nothing else changes',
        { ...afterRotation, previous_secret_expires_at: null, updated_at: null },
        {
          ...stored,
          updated_at: null,
        },
      );
      same(
        'retrieve after the rotation: the rotated object, without the secret',
        (await call('retrieve', retrieve, { path })).body,
        afterRotation,
      );
      const retested = await call('test after the rotation', test, { path });
      status('test after the rotation', retested.response, 202);
      same(
        'the log after a second test: the newest first, then the first',
        (await logOf('the log after a second test', endpoint.id)).map((delivery) => delivery.message_id),
        [retested.body.message_id, first.message_id],
      );

      // disabled, then enabled: replay since reaches its events again
      const disabled = await call('disable', update, { path, body: { enabled: false } });
      status('disable', disabled.response, 200);
      same(
        'disable: by an employee',
        [disabled.body.enabled, disabled.body.disabled_reason, typeof disabled.body.disabled_at],
        [false, 'employee', 'string'],
      );
      const since = await call('replay since', replaySince, { path, body: { since: endpoint.created_at } });
      status('replay since', since.response, 202);
      // both test events, and any event of the company it wants written since (the clock stands still)
      expect('replay since its creation: both test events, at least', (since.body.replayed ?? 0) >= 2, () => String(since.body.replayed));
      same(
        'the log after replay since: both test deliveries pending from their first attempt',
        (await logOf('the log after replay since', endpoint.id))
          .filter((delivery) => delivery.event_type === 'webhook.test')
          .map((delivery) => [delivery.message_id, delivery.status, delivery.attempts]),
        [
          [retested.body.message_id, 'pending', 0],
          [first.message_id, 'pending', 0],
        ],
      );
      const enabled = await call('enable', update, { path, body: { enabled: true } });
      status('enable', enabled.response, 200);
      same(
        'enable: as before the disable',
        [enabled.body.enabled, enabled.body.disabled_reason, enabled.body.disabled_at],
        [true, null, null],
      );

      // delete: gone from every route
      const deleted = await call('delete', remove, { path });
      status('delete', deleted.response, 204);
      world.webhooks.removed.add(endpoint.id);
      for (const [step, operation, init] of [
        ['retrieve the deleted endpoint', retrieve, { path }],
        ["the deleted endpoint's log", deliveries, { path }],
        ['replay a delivery of the deleted endpoint', replayOne, { path: { ...path, delivery_id: String(first.id) } }],
        ["rotate the deleted endpoint's secret", rotate, { path }],
        ['test the deleted endpoint', test, { path }],
        ['delete it again', remove, { path }],
      ] as const) {
        status(step, (await call(step, operation, init)).response, 404);
      }
      const after = await call('list after the delete', list, { query: [['page_size', '100']] });
      same(
        'list after the delete: not there',
        after.body.data?.some((item) => item.id === endpoint.id),
        false,
      );
    }),
    { seed: options.seed, numRuns: options.numRuns },
  );
  report(t, 'create -> ... -> delete');
}
