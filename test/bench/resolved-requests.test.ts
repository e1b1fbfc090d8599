// What the bench asks a server before a run (bench/kit/scenario-runs.ts, resolved()): a request
// marked CURRENT_ETAG is sent with the ETag its path has now, and a BY_CURSOR request's page=N
// becomes the cursor a walk reaches page N with, against the real service over HTTP. Where the
// server gives no cursor, the page number stays; the markers themselves are never sent.
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { resolved } from '../../bench/kit/scenario-runs.js';
import { BY_CURSOR, CURRENT_ETAG, type Load } from '../../bench/kit/scenarios.js';
import { createSensorWorld } from '../helpers/sensor-world.js';

const load = (requests: Load['requests']): Load => ({ label: 'x', connections: 1, requests, warmup: null });

t.test('against the service over HTTP', async (t) => {
  const world = await createSensorWorld(t, 'postgres');
  await world.ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(world.ctx.app.server.address() as AddressInfo).port}`;
  const query = 'start_date=2026-03-01&end_date=2026-03-15&page_size=100';
  const path = (page: number) => `/api/v1/sensor-data?${query}&page=${page}`;
  const headers = world.all.headers;

  await t.test('page N by the cursor page N - 1 gives, the ETag a path has now', async (t) => {
    const phases = await resolved(url, [
      [
        load([
          { method: 'GET', path: path(5), headers: { ...headers, [BY_CURSOR]: '1' } },
          { method: 'GET', path: path(1), headers: { ...headers, 'if-none-match': CURRENT_ETAG } },
          // past the last page: no cursor to be had
          { method: 'GET', path: path(900), headers: { ...headers, [BY_CURSOR]: '1' } },
        ]),
      ],
    ]);
    const [byCursor, conditional, pastTheEnd] = phases[0]![0]!.requests;

    t.match(byCursor!.path, /[?&]cursor=[\w-]+$/, 'page 5 asked for by cursor');
    t.notMatch(byCursor!.path, /[?&]page=/, 'no page number beside it');
    t.notOk(BY_CURSOR in byCursor!.headers, 'the marker is not sent');
    const [walked, numbered] = await Promise.all([world.get(byCursor!.path.split('?')[1]!), world.get(`${query}&page=5`)]);
    t.equal(walked.status, 200);
    t.same(walked.body.data, numbered.body.data, 'the same records as page 5 by number');
    t.equal(walked.body.meta.pagination.page, 5, 'numbered page 5');

    const fresh = await fetch(url + path(1), { headers });
    await fresh.arrayBuffer();
    t.equal(conditional!.headers['if-none-match'], fresh.headers.get('etag'), 'the ETag page 1 has now');
    const revalidated = await fetch(url + path(1), { headers: conditional!.headers });
    t.equal(revalidated.status, 304, 'and it revalidates');

    t.equal(pastTheEnd!.path, path(900), 'no cursor given: the page number stays');
    t.notOk(BY_CURSOR in pastTheEnd!.headers, 'the marker is not sent');
  });

  await t.test('phases without markers come back as they were', async (t) => {
    const phases = [[load([{ method: 'GET', path: path(1), headers }])]];
    t.equal(await resolved(url, phases), phases);
  });
});
