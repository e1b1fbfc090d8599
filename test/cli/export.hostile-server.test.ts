// coldtrack-export against a server that answers what no ColdTrack service would (a real HTTP peer
// on a loopback port, test/client/hostile-peer.ts): a message echoing the Authorization header,
// a Retry-After of a day, a 200 that is not JSON. The command stops in one line with the reason
// and exit 1, never prints the token or a stack trace, and does not sleep a day.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { type Answer, hostilePeer } from '../client/hostile-peer.js';
import { runExport } from '../client/run-export.js';

const TOKEN = `ctk_${'Hidd3nT0ken'.repeat(4)}Zyxwvu`;
const root = await mkdtemp(join(tmpdir(), 'coldtrack-export-hostile-'));
t.teardown(() => rm(root, { recursive: true, force: true }));

/** The change feed's cursor a new export takes first, answered as the service would: the hostility is on the unit's pages. */
const STARTING_CURSOR: Answer = {
  status: 200,
  body: { data: [], meta: { pagination: { page_size: 1000, has_next: false, next_cursor: 'A'.repeat(34) } } },
};

async function exportAgainst(answer: (n: number) => Answer, name: string) {
  const peer = await hostilePeer((n, request) => (request.url.startsWith('/api/v1/sensor-data/changes') ? STARTING_CURSOR : answer(n)));
  try {
    const relay = {
      url: peer.url,
      statuses: [],
      close: () => peer.close(),
      get requests() {
        return peer.seen.length;
      },
    };
    const started = Date.now();
    const run = await runExport({ relay, token: TOKEN }, [
      '--from',
      '2025-01-01',
      '--to',
      '2025-01-31',
      '--units',
      '1',
      '--out',
      join(root, name),
    ]);
    return { ...run, ms: Date.now() - started };
  } finally {
    await peer.close();
  }
}

const lastLine = (stderr: string) => stderr.trim().split('\n').at(-1) ?? '';

t.test('a server message echoing the token: the command prints it nowhere', async (t) => {
  const run = await exportAgainst(
    () => ({ status: 401, body: { error: { code: 'unauthorized', message: `no such token: Authorization: Bearer ${TOKEN}` } } }),
    'echo',
  );
  t.equal(run.code, 1);
  t.notOk(run.stderr.includes(TOKEN) || run.stdout.includes(TOKEN), 'the token is not in the output');
  t.match(lastLine(run.stderr), /^export stopped: cooling unit 1: 401 unauthorized: no such token: Authorization: Bearer \[redacted\]/);
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace');
});

t.test('Retry-After: 86400: stopped at once with when to come back, not a day asleep', async (t) => {
  const run = await exportAgainst(
    () => ({ status: 503, headers: { 'retry-after': '86400' }, body: { error: { code: 'unavailable', message: 'down' } } }),
    'day',
  );
  t.equal(run.code, 1);
  t.match(
    lastLine(run.stderr),
    /^export stopped: cooling unit 1: GET \/api\/v1\/sensor-data: the service asks to wait 86400 s, longer than the 120 s the client waits \(maxWaitMs\); the service asks to be called again after \d{4}-/,
  );
  t.equal(run.requests, 2, 'the starting cursor, then the page once: no retry');
  t.ok(run.ms < 20_000, `${run.ms} ms`);
});

t.test('a 200 that is not JSON: one line naming it, exit 1, no SyntaxError', async (t) => {
  const run = await exportAgainst(() => ({ status: 200, body: '<html>login first</html>' }), 'html');
  t.equal(run.code, 1);
  t.match(
    lastLine(run.stderr),
    /^export stopped: cooling unit 1: GET \/api\/v1\/sensor-data: HTTP 200 answered a body that is not JSON \(content-type text\/html\)/,
  );
  t.notMatch(run.stderr, /SyntaxError|\n\s+at /);
  t.equal(run.requests, 2, 'the starting cursor, then the page once: not retried');
});
