// POST /v1/users/validate-cooling-user-id/, refused bodies: 400 naming the field (or 413/415),
// never a 5xx, and a refusal never carries `valid`.
import t, { type Test } from 'tap';
import type { ErrorJson } from '../../../src/http/schemas.js';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { randomJson, seededRandom } from '../api-tokens/setup.js';

const PATH = '/v1/users/validate-cooling-user-id/';
const ctx = await createTestApp(t);
await createCompany(ctx.db.pool, 'Alpha Cold');

const post = (payload: string | undefined, contentType: string | null = 'application/json') =>
  ctx.app.inject({
    method: 'POST',
    url: PATH,
    headers: contentType === null ? {} : { 'content-type': contentType },
    ...(payload === undefined ? {} : { payload }),
  });

async function expectRefused(t: Test, payload: string | undefined, status: number, field?: string, contentType?: string | null) {
  const label = `${payload?.slice(0, 60)} (${contentType ?? 'application/json'})`;
  const response = await post(payload, contentType);
  t.equal(response.statusCode, status, `${label}: status`);
  const body = response.json<ErrorJson>();
  t.notOk('valid' in body, `${label}: no answer`);
  if (field !== undefined) {
    t.equal(body.error?.code, 'invalid_request', `${label}: code`);
    t.equal(body.error?.details?.field, field, `${label}: details.field`);
  }
}

t.test('wrong or missing content type: 415', async (t) => {
  await expectRefused(t, 'Alpha Cold-F1', 415, undefined, 'text/plain');
  await expectRefused(t, 'cooling_user_id=Alpha+Cold-F1', 415, undefined, 'application/x-www-form-urlencoded');
  await expectRefused(t, '{"cooling_user_id": "Alpha Cold-F1"}', 415, undefined, null);
  await expectRefused(t, '{"cooling_user_id": "Alpha Cold-F1"}', 415, undefined, 'application/jsonx');
  await expectRefused(t, undefined, 415, undefined, null);
  const response = await post('{"cooling_user_id": "x"}', 'text/html');
  t.equal(response.json<ErrorJson>().error.code, 'unsupported_media_type');
});

t.test('not a JSON object: 400 body', async (t) => {
  for (const raw of ['', '{', '{"cooling_user_id": "x",}', "{'cooling_user_id': 'x'}", 'null', '[]', '"x"', '42', 'true']) {
    await expectRefused(t, raw, 400, 'body');
  }
  await expectRefused(t, '{"__proto__": {"valid": true}, "cooling_user_id": "x"}', 400, 'body');
});

t.test('unknown and missing fields: 400', async (t) => {
  await expectRefused(t, '{}', 400, 'cooling_user_id');
  await expectRefused(t, '{"cooling_user_id": "Alpha Cold-F1", "company_id": 1}', 400, 'company_id');
  await expectRefused(t, '{"coolingUserId": "Alpha Cold-F1"}', 400, 'coolingUserId');
  await expectRefused(t, '{"user_code": "Alpha Cold-F1"}', 400, 'user_code');
});

t.test('cooling_user_id of the wrong type or size: 400', async (t) => {
  const values = [
    null,
    1,
    1.5,
    true,
    [],
    ['Alpha Cold-F1'],
    {},
    { length: [{ toString: 1 }] },
    { length: 3 },
    '',
    '   ',
    'x'.repeat(65),
    '🌽'.repeat(65),
    'a\u0000b',
    'a\u0007b',
  ];
  for (const value of values) {
    await expectRefused(t, JSON.stringify({ cooling_user_id: value }), 400, 'cooling_user_id');
  }
});

t.test('a body too large: 413', async (t) => {
  await expectRefused(t, JSON.stringify({ cooling_user_id: 'x'.repeat(70_000) }), 413);
});

t.test('random bodies never make a 5xx, and a 200 is always exactly {"valid": boolean}', async (t) => {
  const random = seededRandom(20260315);
  let answered = 0;
  for (let i = 0; i < 300; i++) {
    const value = randomJson(random);
    const payload = JSON.stringify(random() < 0.7 ? { cooling_user_id: value } : value) ?? 'null';
    const response = await post(payload);
    if (response.statusCode >= 500) t.fail(`5xx for ${payload.slice(0, 80)}: ${response.body}`);
    if (response.statusCode === 200) {
      answered += 1;
      const body = response.json();
      if (Object.keys(body).join() !== 'valid' || typeof body.valid !== 'boolean')
        t.fail(`shape for ${payload.slice(0, 80)}: ${response.body}`);
    }
  }
  t.ok(answered > 0, `some random strings were answered (${answered})`);
  const { rows } = await ctx.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE role = 'FARMER'");
  t.equal(rows[0]!.n, 2, 'nothing written');
});
