// What is logged and counted of Redis outages (src/redis/outage.ts): lost at the first failure,
// back only once commands have answered with none failing for the quiet time, so a failover that
// answers some commands and fails others is one outage, not one per command.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createOutageTracker } from '../../src/redis/outage.js';

// long enough that a loaded CI machine's late timers (a full parallel suite on 2 cores delayed the
// 40 ms sleeps of a 200 ms quiet time past it) do not end an outage the test keeps going
const QUIET_MS = 1000;

function tracked() {
  const events: string[] = [];
  const tracker = createOutageTracker(
    { onLost: (error) => events.push(`lost: ${String(error)}`), onBack: () => events.push('back') },
    QUIET_MS,
  );
  return { tracker, events };
}

t.test('a flapping outage (failures and successes interleaved) is one outage: one lost, one back', async (t) => {
  const { tracker, events } = tracked();
  tracker.succeeded();
  t.same(events, [], 'successes alone: nothing');
  for (let i = 0; i < 10; i++) {
    tracker.failed(`failure ${i}`);
    await sleep(QUIET_MS / 5);
    tracker.succeeded();
    await sleep(QUIET_MS / 5);
  }
  t.same(events, ['lost: failure 0'], 'lost once, at the first failure; never back while failures keep coming');
  t.ok(tracker.down());
  await sleep(QUIET_MS * 2);
  t.same(events, ['lost: failure 0', 'back'], 'back once the commands have answered for the quiet time');
  t.notOk(tracker.down());
  tracker.failed('the next outage');
  t.same(events.at(-1), 'lost: the next outage', 'a later outage is a new one');
});

t.test('failures alone never make it back; back needs a success after the last failure', async (t) => {
  const { tracker, events } = tracked();
  tracker.failed('down');
  await sleep(QUIET_MS * 2);
  t.same(events, ['lost: down'], 'no success: still down');
  tracker.succeeded();
  await sleep(QUIET_MS / 2);
  t.same(events, ['lost: down', 'back'], 'the first success after a quiet time: back at once (the quiet time has passed)');
});
