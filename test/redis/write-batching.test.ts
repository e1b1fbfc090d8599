// One Redis server's commands of one event-loop turn leave in one write (src/redis/connection.ts):
// a data request sends its revocation check and its rate-limit script from different promise
// continuations, and they share a system call. On the real Redis: nothing leaves the socket
// until the turn's callbacks have run, then everything at once, and every command answers.
import t from 'tap';
import { createRedis, redisReady } from '../../src/redis/connection.js';

const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'write-batching-test');
t.teardown(() => redis.disconnect());
t.ok(await redisReady(redis), 'connected');
const key = `coldtrack-test:write-batching:${process.pid}`;
const socket = () => {
  if (!('stream' in redis)) throw new Error('one server expected');
  return redis.stream;
};

t.test('two commands of one turn, sent from different promise continuations, leave together once the turn is over', async (t) => {
  const first = redis.get(`${key}:a`);
  t.equal(socket().writableCorked, 1, 'the socket is held from the first command on');
  const heldAfterFirst = socket().writableLength;
  t.ok(heldAfterFirst > 0, 'the first command waits in it');
  // as the rate-limit script is sent, a few continuations after the revocation check
  const second = Promise.resolve()
    .then(() => Promise.resolve())
    .then(() => {
      const sending = redis.incr(`${key}:b`);
      t.ok(socket().writableLength > heldAfterFirst, 'the second waits beside it: nothing has left yet');
      return sending;
    });
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(socket().writableCorked, 0, 'released once the turn is over');
  t.equal(socket().writableLength, 0, 'both left in one write');
  t.same(await Promise.all([first, second]), [null, 1], 'both ran');
  await redis.del(`${key}:b`);
});

t.test('a command of a later turn is held only until its own turn is over', async (t) => {
  await redis.get(`${key}:a`);
  t.equal(socket().writableCorked, 0, 'not held between turns');
  const sending = redis.get(`${key}:a`);
  t.equal(socket().writableCorked, 1, 'held in its turn');
  t.equal(await sending, null, 'and answered');
});
