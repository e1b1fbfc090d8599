// GET /api/v1/cooling-units: the company's live units with their location, by id, in the
// paginated envelope every list uses.
import t from 'tap';
import { createWorld, type ErrorJson } from './api-tokens/setup.js';

const world = await createWorld(t);
const { a } = world;
const URL = '/api/v1/cooling-units';

interface UnitsJson {
  data: Array<{ id: number; name: string; location: { id: number; name: string } }>;
  meta: { company_id: number; filters: Record<string, unknown>; pagination: Record<string, number | boolean> };
}

t.test('the live units, by id, each with its location', async (t) => {
  for (const url of [URL, `${URL}/`]) {
    const response = await world.get(a.jwt, url);
    t.equal(response.statusCode, 200, url);
    const body = response.json<UnitsJson>();
    t.strictSame(
      body.data,
      a.unitIds.map((id, i) => ({ id, name: `Alpha Cold unit ${'ABC'[i]}`, location: { id: a.locationId, name: 'Main market' } })),
    );
    t.strictSame(body.meta, {
      company_id: a.companyId,
      filters: {},
      pagination: { page: 1, page_size: 100, total_count: 3, total_pages: 1, has_next: false, has_previous: false },
    });
  }
});

t.test('pagination: pages of page_size, past the last one empty', async (t) => {
  const first = (await world.get(a.jwt, `${URL}?page_size=2`)).json<UnitsJson>();
  t.strictSame(
    first.data.map((unit) => unit.id),
    a.unitIds.slice(0, 2),
  );
  t.match(first.meta.pagination, { page: 1, page_size: 2, total_count: 3, total_pages: 2, has_next: true, has_previous: false });
  const second = (await world.get(a.jwt, `${URL}?page_size=2&page=2`)).json<UnitsJson>();
  t.strictSame(
    second.data.map((unit) => unit.id),
    a.unitIds.slice(2),
  );
  t.match(second.meta.pagination, { page: 2, has_next: false, has_previous: true });
  const past = (await world.get(a.jwt, `${URL}?page=9`)).json<UnitsJson>();
  t.strictSame(past.data, []);
});

t.test('a unit deleted now is gone from the list; one restored is back', async (t) => {
  await world.db.pool.query('UPDATE cooling_units SET deleted = true, deleted_at = now() WHERE id = $1', [a.unitIds[1]]);
  const body = (await world.get(a.jwt, URL)).json<UnitsJson>();
  t.strictSame(
    body.data.map((unit) => unit.id),
    [a.unitIds[0], a.unitIds[2]],
  );
  t.equal(body.meta.pagination.total_count, 2);
  await world.db.pool.query('UPDATE cooling_units SET deleted = false, deleted_at = NULL WHERE id = $1', [a.unitIds[1]]);
  t.equal((await world.get(a.jwt, URL)).json<UnitsJson>().data.length, 3);
});

t.test('bad parameters are 400 naming them', async (t) => {
  for (const [query, field] of [
    ['page=0', 'page'],
    ['page_size=1001', 'page_size'],
    ['page_size=x', 'page_size'],
    ['location_id=1', 'location_id'],
  ] as const) {
    const response = await world.get(a.jwt, `${URL}?${query}`);
    t.equal(response.statusCode, 400, query);
    t.equal(response.json<ErrorJson>().error.details?.field, field, query);
  }
});
