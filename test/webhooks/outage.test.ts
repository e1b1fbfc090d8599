// The sender while PostgreSQL is away (a TCP proxy in front of the test database refuses): its
// claims fail four times a second, and the log says so once, then once more when they work again,
// not at every poll.
import pg from 'pg';
import pino from 'pino';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/settings.js';
import { createTestDatabase } from '../helpers/db.js';
import { proxyInFrontOf } from '../helpers/tcp-proxy.js';

const db = await createTestDatabase(t);
const { proxy, url: proxied } = await proxyInFrontOf(t, db.url);
const pool = new pg.Pool({ connectionString: proxied, max: 2, connectionTimeoutMillis: 500 });
pool.on('error', () => {});
t.teardown(() => pool.end());

const lines: Array<{ level: number; msg: string }> = [];
const log = pino(
  { level: 'debug' },
  new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  }),
);
const dispatcher = createWebhookDispatcher({
  pool,
  clock: { now: () => new Date() },
  log,
  settings: DEFAULT_WEBHOOK_SETTINGS,
  cursorOf: async () => 'cursor',
});
t.teardown(() => dispatcher.close());

t.test('a failing claim is said once, and its recovery once', async (t) => {
  await sleep(600);
  t.same(
    lines.filter((line) => line.level >= 40),
    [],
    'nothing to say while the database answers',
  );
  await proxy.refuse();
  await sleep(2_000);
  const warned = lines.filter((line) => line.level === 40 && line.msg.startsWith('webhooks: claiming due deliveries failed'));
  t.equal(warned.length, 1, 'one warning for about 8 failed polls');
  t.ok(lines.filter((line) => line.level === 20 && line.msg.startsWith('webhooks: claiming')).length >= 3, 'the later failures at debug');
  await proxy.open();
  await sleep(1_500);
  t.equal(lines.filter((line) => line.msg === 'webhooks: claiming due deliveries works again').length, 1, 'its recovery said once');
  t.equal(
    lines.filter((line) => line.level === 40 && line.msg.startsWith('webhooks: claiming due deliveries failed')).length,
    1,
    'no new warning once it works',
  );
});
