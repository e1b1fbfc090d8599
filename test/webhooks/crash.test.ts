// P18: a receiver that is down for a while, then back, has every token event written meanwhile, at
// least once, though a delivering process was killed (SIGKILL) in the middle of an attempt. The
// service runs as real processes (two single-process instances on one database, as a load
// balancer would put them; a replacement started after the kill, as a supervisor would), the
// events are written through the API, and the receiver is a loopback server. A process has no clock
// a test can move, so the down time is short: an event written early in it needs its second retry
// (30 s +-20 % after the first, at 5 s), which sets the test's length (under a minute).
// The figures are printed (t.comment): how many duplicates arrived, and how long after the
// receiver came back the last event did.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { type ServerProcess, startServerProcess } from '../helpers/server-process.js';
import { type Received, startReceiver } from '../helpers/webhook-receiver.js';
import type { WebhookDeliveryJson } from '../helpers/webhooks.js';
import { send, until } from '../operations/harness.js';

const TOKENS = '/api/v1/api-tokens';
const TOKEN_COUNT = 20;
const DOWN_MS = 8_000;
/** An attempt's deadline: the lease of a killed attempt runs out this and 10 s after its claim. */
const TIMEOUT_S = 5;
/** Longer than the 250 ms poll: each delivery is under way while every process looks for work. */
const ANSWER_DELAY_MS = 400;

/** The process among `pids` with a TCP socket on local port `port`: who sent a request (Linux /proc). */
function senderOf(port: number, pids: number[]): number | undefined {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set(
    readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((columns) => columns[1]?.endsWith(hexPort))
      .map((columns) => `socket:[${columns[9]}]`),
  );
  return pids.find((pid) =>
    readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false; // closed since it was listed
      }
    }),
  );
}

t.test('P18: every event reaches a receiver that was down, across a killed delivering process', async (t) => {
  const db = await createTestDatabase(t);
  const company = await createCompany(db.pool, 'Acme');
  const jwt = {
    authorization: `Bearer ${await mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId: company.employeeId, ttlSeconds: 3600 })}`,
  };
  const receiver = await startReceiver(t);
  const env = {
    DATABASE_URL: db.url,
    JWT_SECRET: TEST_JWT_SECRET,
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_S),
    DB_POOL_MAX: '3',
  };
  const started = await Promise.all([startServerProcess(t, env), startServerProcess(t, env)]);
  let alive: ServerProcess[] = [...started];

  const registered = await send(alive[0]!.baseUrl, '/api/v1/webhook-endpoints', {
    method: 'POST',
    headers: jwt,
    body: { url: receiver.url, event_types: ['api_token.created', 'api_token.revoked'] },
  });
  t.equal(registered.status, 201, 'endpoint registered');

  // What the receiver kept: every request it answered 2xx, and the one it read and then hung on
  // (as a receiver that processed a delivery and died before answering would have it); `until`:
  // when it answered, or the connection closed. The down time's 503s are not kept.
  const kept: Array<{ request: Received; until: number }> = [];
  let refused = 0;
  const state: { hung: { request: Received; until: number } | null; back: number } = { hung: null, back: Number.POSITIVE_INFINITY };
  receiver.answer = (_n, request) => {
    if (Date.now() >= state.back) {
      kept.push({ request, until: request.at + ANSWER_DELAY_MS });
      return { status: 200, delayMs: ANSWER_DELAY_MS };
    }
    if (!state.hung && refused === 3) {
      state.hung = { request, until: Number.POSITIVE_INFINITY };
      kept.push(state.hung);
      return 'hang';
    }
    refused++;
    return 503;
  };

  // Down: tokens created and half of them revoked through both instances, an event each
  const downAt = Date.now();
  let changes = 0;
  let killed: { pid: number; at: number; signal: string | null } | null = null;
  let replacement: Promise<ServerProcess> | null = null;
  for (let i = 0; i < TOKEN_COUNT; i++) {
    if (state.hung && !killed) {
      // the attempt under way dies with its process: its lease is left to run out
      const pid = senderOf(
        state.hung.request.remotePort,
        alive.map((server) => server.child.pid!),
      );
      const victim = alive.find((server) => server.child.pid === pid);
      t.ok(victim, `the hung attempt came from one of the instances (pid ${pid})`);
      alive = alive.filter((server) => server !== victim);
      await victim!.stop('SIGKILL');
      killed = { pid: pid!, at: Date.now(), signal: victim!.child.signalCode };
      state.hung.until = killed.at;
      replacement = startServerProcess(t, env);
    }
    const create = await send(alive[i % alive.length]!.baseUrl, TOKENS, {
      method: 'POST',
      headers: jwt,
      body: { name: `P18 ${i}`, scopes: ['users'] },
    });
    if (create.status === 201) changes++;
    if (i % 2 === 0) {
      const id = create.json<{ id: string }>().id;
      const revoke = await send(alive[(i + 1) % alive.length]!.baseUrl, `${TOKENS}/${id}/revoke`, { method: 'POST', headers: jwt });
      if (revoke.status === 200) changes++;
    }
    await sleep(100);
  }
  t.equal(changes, TOKEN_COUNT * 1.5, 'every create and revoke answered 201/200');
  t.ok(killed, 'a delivering process was killed mid-attempt');
  t.equal(killed?.signal, 'SIGKILL', 'by SIGKILL: no graceful close, the attempt cut off');
  if (replacement) alive.push(await replacement);
  await sleep(Math.max(0, downAt + DOWN_MS - Date.now()));
  const back = (state.back = Date.now());

  // Back: every event written (the database's, the changes having all committed) reaches the
  // receiver; then a little longer for a late duplicate
  const { rows: events } = await db.pool.query<{ message_id: string }>('SELECT message_id FROM webhook_events ORDER BY id');
  t.equal(events.length, changes, 'one event per change written (the outbox)');
  const written = events.map((event) => event.message_id).sort();
  // answered 2xx: the one it hung on does not count (its sender never learnt it arrived)
  const acknowledged = () => kept.filter((receipt) => receipt !== state.hung).map(({ request }) => String(request.headers['webhook-id']));
  // (past the last retry a receiver down 8 s can need: 30 s +-20 % after a first one at 5 s)
  await until('the receiver to have every event', () => written.every((id) => acknowledged().includes(id)), 60_000, 100).catch(
    (error: Error) => t.fail(error.message),
  );
  await sleep(1_000);
  const { rows: open } = await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'succeeded'",
  );
  t.equal(open[0]!.n, 0, 'and every delivery succeeded in the database');

  const ids = kept.map(({ request }) => String(request.headers['webhook-id']));
  t.same(
    [...new Set(acknowledged())].sort(),
    written,
    'each event answered 2xx at least once; deduplicated by webhook-id, exactly those written',
  );
  const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i);
  const hung = state.hung!.request;
  const hungId = String(hung.headers['webhook-id']);
  t.same(duplicates, [hungId], 'the only duplicate is the event whose attempt died with its process');

  // never two attempts of one event under way at once, in one process or across processes
  const overlaps = kept
    .filter((a, i) =>
      kept.some(
        (b, j) =>
          j !== i &&
          b.request.headers['webhook-id'] === a.request.headers['webhook-id'] &&
          b.request.at > a.request.at &&
          b.request.at < a.until,
      ),
    )
    .map(({ request }) => request.headers['webhook-id']);
  const resent = kept.find(({ request }) => request !== hung && request.headers['webhook-id'] === hungId);
  t.same(overlaps, [], 'no event sent again while an attempt of it was under way');
  // the killed attempt's lease (timeout + 10 s from its claim) ran out before anyone sent it again
  const leaseWait = (resent?.request.at ?? Number.NaN) - hung.at;
  t.ok(leaseWait >= (TIMEOUT_S + 10) * 1000 - 500, `sent again after the lease ran out (${leaseWait} ms)`);
  // the delivery log has every attempt made: the killed one marked interrupted (no answer recorded)
  // by the claim that sent it again, at the time it was sent
  const { rows: log } = await db.pool.query<{ attempts: number; outcomes: string[]; started: Date[]; errors: Array<string | null> }>(
    `SELECT d.attempts, array_agg(a.outcome ORDER BY a.id) AS outcomes, array_agg(a.started_at ORDER BY a.id) AS started,
            array_agg(a.error ORDER BY a.id) AS errors
     FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id JOIN webhook_attempts a ON a.delivery_id = d.id
     WHERE ev.message_id = $1 GROUP BY d.id`,
    [hungId],
  );
  const hungLog = log[0]!;
  t.equal(hungLog.outcomes.length, hungLog.attempts, `every attempt counted is in the log (${hungLog.outcomes.join(', ')})`);
  const interrupted = hungLog.outcomes.indexOf('interrupted');
  t.same(
    hungLog.outcomes.filter((outcome) => outcome === 'interrupted'),
    ['interrupted'],
    'one attempt interrupted: the killed one',
  );
  // (sent again while the receiver was still down, a retry failed before one got through)
  t.match(
    hungLog.outcomes.slice(interrupted + 1).join(','),
    /^(failed,)*succeeded$/,
    'then sent again by the next claim, until an attempt got through',
  );
  t.ok(
    Math.abs(hungLog.started[interrupted]!.getTime() - hung.at) < 1_000,
    `the interrupted attempt started when the receiver got it (${hungLog.started[interrupted]!.getTime() - hung.at} ms apart)`,
  );
  t.match(hungLog.errors[interrupted], /^interrupted: /, 'and says why it has no answer');
  const { rows: sending } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_attempts WHERE outcome = 'sending'");
  t.equal(sending[0]!.n, 0, 'no attempt left under way');
  const entries = await send(
    alive[0]!.baseUrl,
    `/api/v1/webhook-endpoints/${registered.json<{ id: string }>().id}/deliveries?page_size=100`,
    {
      headers: jwt,
    },
  );
  const entry = entries.json<{ data: WebhookDeliveryJson[] }>().data.find((delivery) => delivery.message_id === hungId);
  t.match(
    entry,
    { status: 'succeeded', attempts: hungLog.attempts, interrupted_attempts: 1, last_attempt: { outcome: 'succeeded', status_code: 200 } },
    "the API's delivery log counts the interrupted attempt",
  );

  const firstOk = new Map<string, number>();
  for (const { request } of kept)
    if (request.at >= back && !firstOk.has(String(request.headers['webhook-id'])))
      firstOk.set(String(request.headers['webhook-id']), request.at);
  const lastAfterBack = Math.max(...firstOk.values()) - back;
  t.comment(
    `P18: ${events.length} events (${TOKEN_COUNT} created, ${TOKEN_COUNT / 2} revoked) over ${started.length} instances; receiver down ${((back - downAt) / 1000).toFixed(1)} s ` +
      `(${refused} attempts answered 503), pid ${killed!.pid} killed ${((killed!.at - downAt) / 1000).toFixed(1)} s in with an attempt under way`,
  );
  t.comment(
    `P18: ${ids.length} deliveries kept, ${written.length} distinct, ${duplicates.length} duplicate(s); the killed attempt's event sent again ` +
      `${(leaseWait / 1000).toFixed(1)} s later; the last event ${(lastAfterBack / 1000).toFixed(1)} s after the receiver came back`,
  );
});
