// POST /v1/users/validate-cooling-user-id/, accepted bodies: true only for an active farmer's code,
// and the answer is always exactly {"valid": boolean}, with no credentials needed.
import t, { type Test } from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';

const PATH = '/v1/users/validate-cooling-user-id/';
const ctx = await createTestApp(t);
const a = await createCompany(ctx.db.pool, 'Alpha Cold');
await createCompany(ctx.db.pool, 'Beta Cold');
// createCompany's farmers hold the codes `<company>-F1` and `<company>-F2`
await ctx.db.pool.query("UPDATE users SET is_active = false WHERE user_code = 'Alpha Cold-F2'");
// the schema lets a non-farmer hold a code; it still is not a cooling user
await ctx.db.pool.query("UPDATE users SET user_code = 'OP-1' WHERE id = $1", [a.operatorId]);
await ctx.db.pool.query("UPDATE users SET user_code = 'EMP-1' WHERE id = $1", [a.employeeId]);

async function validate(code: unknown, headers: Record<string, string> = {}) {
  const response = await ctx.app.inject({
    method: 'POST',
    url: PATH,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify({ cooling_user_id: code }),
  });
  return response;
}

async function expectAnswer(t: Test, code: unknown, valid: boolean, label = String(code)) {
  const response = await validate(code);
  t.equal(response.statusCode, 200, `${label}: status`);
  t.same(response.json(), { valid }, `${label}: exactly {"valid": ${valid}}`);
  t.equal(response.headers['cache-control'], 'no-store', `${label}: not cached`);
  t.match(response.headers['content-type'], /^application\/json/, `${label}: JSON`);
}

t.test('an active farmer code is valid, in either company', async (t) => {
  await expectAnswer(t, 'Alpha Cold-F1', true);
  await expectAnswer(t, 'Beta Cold-F2', true);
  await expectAnswer(t, '  Alpha Cold-F1\t', true, 'surrounding whitespace is trimmed');
});

t.test('everything else is simply not valid, with the same shape', async (t) => {
  await expectAnswer(t, 'Alpha Cold-F2', false, 'inactive farmer');
  await expectAnswer(t, 'NO-SUCH-CODE', false, 'unknown code');
  await expectAnswer(t, 'OP-1', false, "an operator's code");
  await expectAnswer(t, 'EMP-1', false, "an employee's code");
  await expectAnswer(t, 'alpha cold-f1', false, 'codes match exactly (case)');
  await expectAnswer(t, 'Alpha Cold-F', false, 'no prefix match');
  await expectAnswer(t, '%', false, 'no LIKE pattern');
  await expectAnswer(t, "' OR '1'='1", false, 'SQL is just text');
  await expectAnswer(t, 'x'.repeat(64), false, '64 characters');
  await expectAnswer(t, '🌽'.repeat(10), false, 'non-ASCII');
  await expectAnswer(t, '🌽'.repeat(64), false, '64 characters outside the BMP (128 UTF-16 units)');
  await expectAnswer(t, ` x${' '.repeat(70)}`, false, 'surrounding whitespace does not count toward 64');
  const valid = await validate('Alpha Cold-F1');
  const invalid = await validate('NO-SUCH-CODE');
  t.same(Object.keys(valid.headers).sort(), Object.keys(invalid.headers).sort(), 'same headers either way');
});

t.test('no credentials needed, and any sent are ignored', async (t) => {
  const response = await validate('Alpha Cold-F1', { authorization: 'Bearer not-a-token' });
  t.equal(response.statusCode, 200);
  t.same(response.json(), { valid: true });
});

t.test('content type with parameters is still JSON', async (t) => {
  const response = await validate('Alpha Cold-F1', { 'content-type': 'application/json; charset=utf-8' });
  t.same(response.json(), { valid: true });
});

t.test('only the exact path, trailing slash included, is the endpoint', async (t) => {
  const response = await ctx.app.inject({
    method: 'POST',
    url: PATH.slice(0, -1),
    headers: { 'content-type': 'application/json' },
    payload: { cooling_user_id: 'Alpha Cold-F1' },
  });
  t.equal(response.statusCode, 404);
  t.notOk('valid' in response.json());
});
