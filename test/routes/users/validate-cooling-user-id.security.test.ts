// POST /v1/users/validate-cooling-user-id/ gives an enumerator nothing: the 30-a-minute budget per
// client IP holds whatever the body, answers for a valid, an inactive, a non-farmer and an unknown
// code are byte-for-byte the same shape and headers, credentials sent along change nothing, and
// SQL-looking codes are just codes.
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';

const PATH = '/v1/users/validate-cooling-user-id/';

t.test('the validate endpoint reveals nothing and cannot be enumerated quickly', async (t) => {
  const ctx = await createTestApp(t, {}, { realRateLimits: true });
  const a = await createCompany(ctx.db.pool, 'Alpha Cold');
  await ctx.db.pool.query("UPDATE users SET is_active = false WHERE user_code = 'Alpha Cold-F2'");
  await ctx.db.pool.query("UPDATE users SET user_code = 'OP-1' WHERE id = $1", [a.operatorId]);
  let address = 0;
  const validate = (code: string, remoteAddress = `192.0.2.${++address}`, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: 'POST',
      url: PATH,
      remoteAddress,
      headers: { 'content-type': 'application/json', ...headers },
      payload: { cooling_user_id: code },
    });

  await t.test('every answer has the same shape and headers, whatever the code is', async (t) => {
    const shape = async (code: string) => {
      const reply = await validate(code);
      const { date: _date, 'x-request-id': _id, 'x-ratelimit-reset': _reset, 'content-length': _length, ...headers } = reply.headers;
      return {
        status: reply.statusCode,
        keys: Object.keys(reply.json()),
        headers,
        length: reply.body.length - (reply.json().valid ? 0 : 1),
      };
    };
    const valid = await shape('Alpha Cold-F1');
    for (const code of ['Alpha Cold-F2', 'OP-1', 'nobody-at-all', "' OR 1=1 --", 'Alpha Cold-F1 ']) {
      t.same(await shape(code), valid, `"${code}" answers like a valid code but for the value`);
    }
    t.same((await validate("' OR '1'='1")).json(), { valid: false }, 'an SQL-looking code is only a code');
    t.same((await validate('Alpha Cold-F1 ')).json(), { valid: true }, 'surrounding spaces are trimmed, nothing else is interpreted');
  });

  await t.test('30 checks a minute per client IP, whatever the bodies and credentials', async (t) => {
    const ip = '198.51.100.77';
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const headers: Record<string, string> = i % 2 ? { authorization: `Bearer ${await ctx.jwtFor(a.employeeId)}` } : {};
      statuses.push((await validate(`guess-${i}`, ip, headers)).statusCode);
    }
    t.same(statuses.slice(0, 30), Array(30).fill(200), 'the first 30 answer (an employee JWT buys no extra budget)');
    t.equal(statuses[30], 429, 'the 31st is refused');
    const malformed = await ctx.app.inject({
      method: 'POST',
      url: PATH,
      remoteAddress: ip,
      headers: { 'content-type': 'application/json' },
      payload: '{"cooling_user_id": 5}',
    });
    t.equal(malformed.statusCode, 429, 'a malformed body from the same address is refused as well, not validated');
    t.equal((await validate('Alpha Cold-F1', '198.51.100.78')).statusCode, 200, 'another address has its own budget');
  });
});
