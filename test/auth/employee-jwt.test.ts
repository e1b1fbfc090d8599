// Employee JWTs on the management surface: the one pinned algorithm (HS256 with JWT_SECRET, or
// RS256/ES256 with JWT_PUBLIC_KEY), the claims (exp, sub, iss, aud) and who the subject must be.
// Every refusal is 401 with `WWW-Authenticate: Bearer` and the unauthorized body, or 403/404.
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import { createTestApp, TEST_JWT_SECRET, type TestApp } from '../helpers/app.js';
import { createCompany, type CompanyFixture } from '../helpers/fixtures.js';
import { BASE, createWorld, type ErrorJson } from '../routes/api-tokens/setup.js';

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** An HS-family JWT built by hand, so nothing in a library can refuse to make a hostile one. */
function hmacJwt(
  payload: Record<string, unknown>,
  secret: string | Buffer,
  header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' },
) {
  const bits = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[String(header.alg)] ?? 'sha256';
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac(bits, secret).update(input).digest('base64url')}`;
}

function unsignedJwt(payload: Record<string, unknown>, alg = 'none') {
  return `${b64url({ alg, typ: 'JWT' })}.${b64url(payload)}.`;
}

async function keyJwt(payload: Record<string, unknown>, key: KeyObject, alg: string) {
  return new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT' }).sign(key);
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** Claims of a good token for `userId` at the app clock: valid for an hour. */
const claims = (app: TestApp, userId: number | string, extra: Record<string, unknown> = {}) => {
  const now = seconds(app.clock.now());
  return { sub: String(userId), iat: now, exp: now + 3600, ...extra };
};

const list = (app: TestApp, authorization?: string) =>
  app.app.inject({ method: 'GET', url: BASE, headers: authorization === undefined ? {} : { authorization } });

function expect401(t: Test, response: LightMyRequestResponse, label: string) {
  t.equal(response.statusCode, 401, `${label}: 401`);
  t.match(response.headers['www-authenticate'], /^Bearer( |$)/, `${label}: WWW-Authenticate: Bearer`);
  const body = response.json<ErrorJson>();
  t.strictSame(Object.keys(body), ['error'], `${label}: error body`);
  t.equal(body.error?.code, 'unauthorized', `${label}: code`);
  t.type(body.error?.message, 'string', `${label}: message`);
  t.notMatch(response.body, /JWS|JWT[A-Z]|ERR_|jose|stack/, `${label}: no library internals`);
}

// --- HS256, the default configuration (JWT_SECRET) ---------------------------------------------
const hs = await createWorld(t);
const { a, b } = hs;

t.test('HS256: a valid JWT of an active Registered Employee is accepted', async (t) => {
  t.equal((await list(hs, `Bearer ${a.jwt}`)).statusCode, 200);
  t.equal((await list(hs, `bearer ${a.jwt}`)).statusCode, 200, 'the scheme is case-insensitive (RFC 7235)');
  t.equal((await list(hs, `Bearer ${hmacJwt(claims(hs, a.employeeId), TEST_JWT_SECRET)}`)).statusCode, 200, 'a hand-built HS256 token');
});

t.test('missing or malformed Authorization', async (t) => {
  const missing = await list(hs);
  expect401(t, missing, 'no header');
  t.equal(missing.headers['www-authenticate'], 'Bearer realm="coldtrack"', 'no error attribute without credentials (RFC 6750 §3.1)');
  for (const header of [
    '',
    'Bearer',
    'Bearer ',
    `Basic ${Buffer.from('user:pass').toString('base64')}`,
    `Token ${a.jwt}`,
    a.jwt,
    `Bearer ${a.jwt} extra`,
    `Bearer ${a.jwt.split('.').slice(0, 2).join('.')}`,
    `Bearer ${a.jwt}.x`,
    'Bearer not.a.jwt',
    'Bearer ....',
    `Bearer ${'A'.repeat(8000)}`,
    'Bearer ctk_notatoken',
  ]) {
    expect401(t, await list(hs, header), `"${header.slice(0, 30)}"`);
  }
});

t.test('expired: minted long ago, or outlived by the app clock', async (t) => {
  const old = await hs.jwtFor(a.employeeId, { now: new Date(hs.clock.now().getTime() - 2 * 3600_000), ttlSeconds: 3600 });
  expect401(t, await list(hs, `Bearer ${old}`), 'expired an hour ago');

  const shortLived = await hs.jwtFor(a.employeeId, { ttlSeconds: 60 });
  t.equal((await list(hs, `Bearer ${shortLived}`)).statusCode, 200, 'valid now');
  hs.clock.advance(30_000);
  t.equal((await list(hs, `Bearer ${shortLived}`)).statusCode, 200, 'valid 30 s later');
  hs.clock.advance(40_000);
  expect401(t, await list(hs, `Bearer ${shortLived}`), '70 s later (past exp and any leeway)');
  hs.clock.advance(-70_000);
});

t.test('not yet valid (nbf in the future)', async (t) => {
  const now = seconds(hs.clock.now());
  expect401(t, await list(hs, `Bearer ${hmacJwt(claims(hs, a.employeeId, { nbf: now + 600 }), TEST_JWT_SECRET)}`), 'nbf +10 min');
});

t.test('bad signature: another secret, a tampered payload, a stripped signature', async (t) => {
  expect401(
    t,
    await list(hs, `Bearer ${hmacJwt(claims(hs, a.employeeId), 'another-secret-another-secret-another-secret')}`),
    'other secret',
  );
  const [header, , signature] = a.jwt.split('.');
  const forged = `${header}.${b64url(claims(hs, b.employeeId))}.${signature}`;
  expect401(t, await list(hs, `Bearer ${forged}`), 'payload swapped under a valid signature');
  expect401(t, await list(hs, `Bearer ${a.jwt.split('.').slice(0, 2).join('.')}.`), 'signature stripped');
  const flipped = a.jwt.slice(0, -2) + (a.jwt.endsWith('AA') ? 'BB' : 'AA');
  expect401(t, await list(hs, `Bearer ${flipped}`), 'signature altered');
});

t.test('alg none, and algorithms other than the pinned HS256', async (t) => {
  for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
    expect401(t, await list(hs, `Bearer ${unsignedJwt(claims(hs, a.employeeId), alg)}`), `alg ${alg}`);
  }
  const withSignature = `${unsignedJwt(claims(hs, a.employeeId))}${hmacJwt(claims(hs, a.employeeId), TEST_JWT_SECRET).split('.')[2]}`;
  expect401(t, await list(hs, `Bearer ${withSignature}`), 'alg none with a signature attached');
  for (const alg of ['HS384', 'HS512']) {
    const token = hmacJwt(claims(hs, a.employeeId), TEST_JWT_SECRET, { alg, typ: 'JWT' });
    expect401(t, await list(hs, `Bearer ${token}`), `${alg} with the right secret`);
  }
  const noAlg = hmacJwt(claims(hs, a.employeeId), TEST_JWT_SECRET, { typ: 'JWT' });
  expect401(t, await list(hs, `Bearer ${noAlg}`), 'no alg in the header');
});

t.test('required claims: exp and sub', async (t) => {
  const { exp, ...withoutExp } = claims(hs, a.employeeId);
  t.ok(exp);
  expect401(t, await list(hs, `Bearer ${hmacJwt(withoutExp, TEST_JWT_SECRET)}`), 'no exp');
  expect401(t, await list(hs, `Bearer ${hmacJwt({ ...withoutExp, exp: String(exp) }, TEST_JWT_SECRET)}`), 'exp as a string');
  expect401(t, await list(hs, `Bearer ${hmacJwt({ ...withoutExp, exp: null }, TEST_JWT_SECRET)}`), 'exp null');
  const { sub, ...withoutSub } = claims(hs, a.employeeId);
  t.ok(sub);
  expect401(t, await list(hs, `Bearer ${hmacJwt(withoutSub, TEST_JWT_SECRET)}`), 'no sub');
});

t.test('sub must be a user id', async (t) => {
  for (const sub of [
    'abc',
    '',
    ' ',
    '1.5',
    '-1',
    '0',
    `0${a.employeeId}`,
    '1e3',
    ` ${a.employeeId}`,
    `${a.employeeId} `,
    '2147483648',
    '99999999999',
    '0x1',
    `${a.employeeId}abc`,
    "1' OR '1'='1",
  ]) {
    expect401(t, await list(hs, `Bearer ${hmacJwt(claims(hs, sub), TEST_JWT_SECRET)}`), `sub ${JSON.stringify(sub)}`);
  }
  for (const sub of [a.employeeId, [String(a.employeeId)], { id: a.employeeId }, true, null]) {
    const token = hmacJwt({ ...claims(hs, a.employeeId), sub }, TEST_JWT_SECRET);
    expect401(t, await list(hs, `Bearer ${token}`), `sub not a string: ${JSON.stringify(sub)}`);
  }
});

t.test('the subject must be a known, active user', async (t) => {
  expect401(t, await list(hs, `Bearer ${await hs.jwtFor(999_999)}`), 'unknown user id');
  expect401(t, await list(hs, `Bearer ${await hs.jwtFor(2_147_483_647)}`), 'largest user id, unknown');
  expect401(t, await list(hs, `Bearer ${await hs.jwtFor(a.inactiveEmployeeId)}`), 'inactive employee');
});

t.test('operators and farmers are authenticated but not allowed: 403 insufficient_scope', async (t) => {
  for (const [label, userId] of [
    ['operator', a.operatorId],
    ['farmer', a.farmerIds[0]!],
    ['operator of B', b.operatorId],
  ] as const) {
    const response = await list(hs, `Bearer ${await hs.jwtFor(userId)}`);
    t.equal(response.statusCode, 403, label);
    const error = response.json<ErrorJson>().error;
    t.equal(error.code, 'insufficient_scope', `${label}: code`);
    t.type(error.details?.required_scope, 'string', `${label}: details.required_scope`);
  }
  const create = await hs.post(await hs.jwtFor(a.operatorId), BASE, { name: 'x', scopes: ['users'] });
  t.equal(create.statusCode, 403, 'an operator cannot create either');
});

t.test('an employee of company B touching company A’s token: 404', async (t) => {
  const token = await hs.createToken(a.jwt);
  t.equal((await hs.get(b.jwt, `${BASE}/${token.id}`)).statusCode, 404, 'retrieve');
  t.equal((await hs.post(b.jwt, `${BASE}/${token.id}/revoke`)).statusCode, 404, 'revoke');
  t.equal((await hs.get(a.jwt, `${BASE}/${token.id}`)).json<{ revoked: boolean }>().revoked, false, 'A’s token untouched');
});

t.test('a company claim in the JWT is ignored: the company comes from the user row', async (t) => {
  const token = hmacJwt(claims(hs, b.employeeId, { company_id: a.companyId, role: 'ADMIN' }), TEST_JWT_SECRET);
  const response = await list(hs, `Bearer ${token}`);
  t.equal(response.statusCode, 200);
  t.equal(response.json<{ meta: { company_id: number } }>().meta.company_id, b.companyId);
});

// --- RS256 / ES256 with JWT_PUBLIC_KEY ----------------------------------------------------------
async function publicKeyApp(t: Test, keyPair: { publicKey: KeyObject; privateKey: KeyObject }) {
  const pem = keyPair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const app = await createTestApp(t, { JWT_SECRET: '', JWT_PUBLIC_KEY: pem });
  const company: CompanyFixture = await createCompany(app.db.pool, 'Keyed Cold');
  return { app, company, pem };
}

t.test('RS256 with JWT_PUBLIC_KEY', async (t) => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const { app, company, pem } = await publicKeyApp(t, rsa);
  t.equal(app.config.jwt?.kind, 'public-key', 'configured with the public key only');
  const good = await keyJwt(claims(app, company.employeeId), rsa.privateKey, 'RS256');
  const accepted = await list(app, `Bearer ${good}`);
  t.equal(accepted.statusCode, 200, 'an RS256 token signed with the private key works');
  t.equal(accepted.json<{ meta: { company_id: number } }>().meta.company_id, company.companyId);
  const created = await app.app.inject({
    method: 'POST',
    url: BASE,
    headers: { authorization: `Bearer ${good}` },
    payload: { name: 'rs256', scopes: ['users'] },
  });
  t.equal(created.statusCode, 201, 'and can create a token');

  // algorithm confusion: the public key's PEM text used as an HMAC secret
  expect401(t, await list(app, `Bearer ${hmacJwt(claims(app, company.employeeId), pem)}`), 'HS256 signed with the PEM text');
  expect401(t, await list(app, `Bearer ${hmacJwt(claims(app, company.employeeId), pem.trim())}`), 'HS256 signed with the trimmed PEM');
  const der = rsa.publicKey.export({ type: 'spki', format: 'der' });
  expect401(t, await list(app, `Bearer ${hmacJwt(claims(app, company.employeeId), der)}`), 'HS256 signed with the DER key');
  expect401(t, await list(app, `Bearer ${await app.jwtFor(company.employeeId)}`), 'HS256 with the test secret');
  expect401(t, await list(app, `Bearer ${unsignedJwt(claims(app, company.employeeId))}`), 'alg none');
  const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  expect401(t, await list(app, `Bearer ${await keyJwt(claims(app, company.employeeId), otherKey, 'RS256')}`), 'RS256 from another key');
  expect401(
    t,
    await list(app, `Bearer ${await keyJwt(claims(app, company.employeeId), rsa.privateKey, 'PS256')}`),
    'PS256 with the same key',
  );
  expect401(
    t,
    await list(app, `Bearer ${await keyJwt(claims(app, company.employeeId), rsa.privateKey, 'RS512')}`),
    'RS512 with the same key',
  );
  const now = seconds(app.clock.now());
  const expired = await keyJwt({ sub: String(company.employeeId), iat: now - 7200, exp: now - 3600 }, rsa.privateKey, 'RS256');
  expect401(t, await list(app, `Bearer ${expired}`), 'RS256, expired');
  const { exp, ...noExp } = claims(app, company.employeeId);
  t.ok(exp);
  expect401(t, await list(app, `Bearer ${await keyJwt(noExp, rsa.privateKey, 'RS256')}`), 'RS256, no exp');
  const operator = await list(app, `Bearer ${await keyJwt(claims(app, company.operatorId), rsa.privateKey, 'RS256')}`);
  t.equal(operator.statusCode, 403, 'RS256 operator: 403');
});

t.test('ES256 (P-256) with JWT_PUBLIC_KEY', async (t) => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { app, company, pem } = await publicKeyApp(t, ec);
  t.equal((await list(app, `Bearer ${await keyJwt(claims(app, company.employeeId), ec.privateKey, 'ES256')}`)).statusCode, 200);
  expect401(t, await list(app, `Bearer ${hmacJwt(claims(app, company.employeeId), pem)}`), 'HS256 signed with the PEM text');
  expect401(t, await list(app, `Bearer ${unsignedJwt(claims(app, company.employeeId))}`), 'alg none');
});

// --- JWT_ISSUER / JWT_AUDIENCE -----------------------------------------------------------------
t.test('issuer and audience are checked when configured', async (t) => {
  const issuer = 'https://auth.coldtrack.test';
  const audience = 'coldtrack-partner-api';
  const app = await createTestApp(t, { JWT_ISSUER: issuer, JWT_AUDIENCE: audience });
  const company = await createCompany(app.db.pool, 'Issued Cold');
  const token = (extra: Record<string, unknown>) => hmacJwt(claims(app, company.employeeId, extra), TEST_JWT_SECRET);

  t.equal((await list(app, `Bearer ${token({ iss: issuer, aud: audience })}`)).statusCode, 200, 'right issuer and audience');
  t.equal((await list(app, `Bearer ${token({ iss: issuer, aud: ['other', audience] })}`)).statusCode, 200, 'audience among several');
  expect401(t, await list(app, `Bearer ${token({ iss: 'https://evil.test', aud: audience })}`), 'wrong issuer');
  expect401(t, await list(app, `Bearer ${token({ iss: `${issuer}/`, aud: audience })}`), 'issuer with a trailing slash');
  expect401(t, await list(app, `Bearer ${token({ aud: audience })}`), 'no issuer');
  expect401(t, await list(app, `Bearer ${token({ iss: issuer, aud: 'other-api' })}`), 'wrong audience');
  expect401(t, await list(app, `Bearer ${token({ iss: issuer, aud: ['other-api'] })}`), 'wrong audience list');
  expect401(t, await list(app, `Bearer ${token({ iss: issuer })}`), 'no audience');
  expect401(t, await list(app, `Bearer ${await app.jwtFor(company.employeeId)}`), 'a token minted without iss/aud');
});
