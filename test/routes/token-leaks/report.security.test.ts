// What a leak report must prove before anything changes: the raw body signed by a configured key.
// Unsigned, signed by a key not configured, under an unknown key identifier, with a bad or
// malformed signature, or with the body changed after signing: 401 and nothing revoked. Bad
// bodies (not an array, empty, too many entries, unknown or missing fields, wrong types, control
// characters, duplicate keys) are 400 even when signed, before any token is revoked; an oversized
// body is 413; a form is 415. Unset LEAK_REPORT_PUBLIC_KEYS: the route answers as an unknown one.
import t, { type Test } from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';
import { KEY_ID, keysSetting, leakEvents, LEAKS, makeSigner, reportBody, revokedCount, signatureOf, signedHeaders } from './setup.js';

const github = makeSigner();
const rotated = makeSigner('b'.repeat(64)); // the next key, configured beside the current one
const stranger = makeSigner(KEY_ID); // the current key's identifier, another key pair
const ctx = await createTestApp(t, { LEAK_REPORT_PUBLIC_KEYS: keysSetting(github, rotated) });
const acme = await createCompany(ctx.db.pool, 'Acme');
const leaked = await issueToken(ctx, acme.employeeId);
const send = (body: string | Buffer, headers: Record<string, string>) =>
  ctx.app.inject({ method: 'POST', url: LEAKS, headers, payload: body });

/** Every case below must leave the token live and its trail without a leak. */
async function changedNothing(t: Test, what: string) {
  t.equal(await revokedCount(ctx.db.pool), 0, `${what}: nothing revoked`);
  t.same(await leakEvents(ctx.db.pool, leaked.id), [], `${what}: no event`);
}

const body = reportBody([{ token: leaked.token }]);

t.test('a report not signed by a configured key is 401 and changes nothing', async (t) => {
  const good = signedHeaders(github, body);
  const cases: Array<[string, Record<string, string>, string | Buffer]> = [
    ['no signature headers', { 'content-type': 'application/json' }, body],
    ['no key identifier', { 'content-type': 'application/json', 'github-public-key-signature': good['github-public-key-signature'] }, body],
    ['no signature', { 'content-type': 'application/json', 'github-public-key-identifier': KEY_ID }, body],
    ['an unknown key identifier', { ...good, 'github-public-key-identifier': 'c'.repeat(64) }, body],
    ['signed by another key under a configured identifier', signedHeaders(stranger, body), body],
    [
      'signed by the other configured key, named as this one',
      { ...signedHeaders(rotated, body), 'github-public-key-identifier': KEY_ID },
      body,
    ],
    ['the body changed after signing', good, body.replace('"content"', '"commit"')],
    ['a byte appended after signing', good, body + ' '],
    ['a signature over another body', { ...good, 'github-public-key-signature': signatureOf(github, '[]') }, body],
    ['a signature that is not base64', { ...good, 'github-public-key-signature': '!!not base64!!' }, body],
    [
      'a signature that is not DER',
      { ...good, 'github-public-key-signature': Buffer.from('not a der signature').toString('base64') },
      body,
    ],
    ['an empty signature', { ...good, 'github-public-key-signature': '' }, body],
    ['unsigned, not even JSON', { 'content-type': 'application/json' }, '{not json'],
  ];
  for (const [what, headers, payload] of cases) {
    const response = await send(payload, headers);
    t.equal(response.statusCode, 401, what);
    t.equal(response.json().error.code, 'unauthorized', what);
    t.ok(response.headers['www-authenticate'], `${what}: a challenge`);
    t.notOk(response.body.includes(leaked.token), `${what}: the token is not echoed`);
  }
  const noBody = await ctx.app.inject({ method: 'POST', url: LEAKS, headers: { 'github-public-key-identifier': KEY_ID } });
  t.equal(noBody.statusCode, 415, 'no body, no Content-Type: 415');
  await changedNothing(t, 'refused reports');
});

t.test('the second configured key (rotation) is accepted', async (t) => {
  const probe = reportBody([{ token: 'ctk_notatoken' }]);
  const response = await send(probe, signedHeaders(rotated, probe));
  t.equal(response.statusCode, 200);
  t.equal(response.json()[0].label, 'false_positive');
});

t.test('signed bad bodies are 400 naming the problem, and revoke nothing (even the valid entries)', async (t) => {
  const entry = JSON.parse(body)[0] as Record<string, unknown>;
  const many = JSON.stringify(Array.from({ length: 1001 }, () => entry));
  const cases: Array<[string, string, string]> = [
    ['an object, not an array', JSON.stringify(entry), 'body'],
    ['an empty array', '[]', 'body'],
    ['1001 entries', many, 'body'],
    ['an unknown field', JSON.stringify([entry, { ...entry, extra: 1 }]), '1'],
    ['a missing token', JSON.stringify([entry, { type: 'x', url: '', source: 'content' }]), '1'],
    ['a missing source', JSON.stringify([entry, { token: 'x', type: 'x', url: '' }]), '1'],
    ['a number as token', JSON.stringify([entry, { ...entry, token: 42 }]), '1'],
    ['null as url', JSON.stringify([entry, { ...entry, url: null }]), '1'],
    ['an entry that is a string', JSON.stringify([entry, 'ctk_x']), '1'],
    ['a NUL in the URL', JSON.stringify([entry, { ...entry, url: 'https://x.example/\u0000' }]), '1'],
    ['an empty token', JSON.stringify([entry, { ...entry, token: '' }]), '1'],
    ['a key given twice', `[{"token":"${leaked.token}","token":"x","type":"t","url":"","source":"content"}]`, 'token'],
    ['not JSON', '[{"token":', 'body'],
    ['a lone surrogate', JSON.stringify([entry]).replace('"content"', '"\\ud800"'), '0'],
  ];
  for (const [what, payload, field] of cases) {
    const response = await send(payload, signedHeaders(github, payload));
    t.equal(response.statusCode, 400, what);
    t.equal(response.json().error.code, 'invalid_request', what);
    t.equal(response.json().error.details?.field, field, `${what}: names ${field}`);
    t.notOk(response.body.includes(leaked.token), `${what}: the token is not echoed`);
  }
  await changedNothing(t, 'bad bodies');
});

t.test('an oversized report is 413; a form is 415; nothing changes', async (t) => {
  const padding = 'x'.repeat(4000);
  const huge = JSON.stringify(Array.from({ length: 300 }, () => ({ token: leaked.token, type: 't', url: padding, source: 'content' })));
  t.ok(huge.length > 1024 * 1024, 'over 1 MiB');
  const oversized = await send(huge, signedHeaders(github, huge));
  t.equal(oversized.statusCode, 413);
  t.equal(oversized.json().error.code, 'payload_too_large');
  const form = await send('token=x', { ...signedHeaders(github, 'token=x'), 'content-type': 'application/x-www-form-urlencoded' });
  t.equal(form.statusCode, 415);
  await changedNothing(t, 'refused bodies');
});

t.test('a report of 1000 entries is answered in full', async (t) => {
  const entries = Array.from({ length: 1000 }, (_, i) => ({ token: `ctk_fake${i}` }));
  const payload = reportBody(entries);
  const response = await send(payload, signedHeaders(github, payload));
  t.equal(response.statusCode, 200);
  t.equal(response.json().length, 1000);
  t.ok(
    response.json().every((entry: { label: string }) => entry.label === 'false_positive'),
    'all false_positive',
  );
});

t.test('LEAK_REPORT_PUBLIC_KEYS unset: the route answers like an unknown one, and revokes nothing', async (t) => {
  const off = await createTestApp(t, {}, { database: ctx.db });
  const response = await off.app.inject({ method: 'POST', url: LEAKS, headers: signedHeaders(github, body), payload: body });
  const unknown = await off.app.inject({ method: 'POST', url: '/api/v1/token-leakz', headers: signedHeaders(github, body), payload: body });
  t.equal(response.statusCode, 404);
  t.equal(unknown.statusCode, 404);
  t.same(response.json(), { error: { code: 'not_found', message: `No route for POST ${LEAKS}` } });
  t.same(response.json().error.code, unknown.json().error.code);
  await changedNothing(t, 'turned off');
});

t.test('no raw token in any log line', async (t) => {
  t.notOk(ctx.logs.join('\n').includes(leaked.token));
});
