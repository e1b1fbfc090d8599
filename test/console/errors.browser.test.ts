// The console's failures in real Chromium against the real service: every refusal is said in
// words where the employee is looking. A non-employee (403), an expired or invalid JWT (401: the
// JWT is dropped, "sign in again"), the service's 400 and 409 messages, a real rate limit (429,
// with the wait) and a real outage of the shared store (503, with the wait).
import { freePort } from '../../src/free-port.js';
import t from 'tap';
import { checkAccessibility, focused, screenshot, startConsole } from './helpers.js';

const SESSION_ENDED = 'Your session has expired or is invalid: sign in again.';
const NOT_AN_EMPLOYEE = 'This account is not a Registered Employee: only a Registered Employee of the company can manage its API tokens.';

const world = await startConsole(t);
const { page, ctx, company, address } = world;
const storedJwt = () => page.evaluate<string | null>('sessionStorage.getItem("coldtrack-console-jwt")');
const signInError = () => page.locator('#sign-in-error').textContent();

t.test('a non-employee JWT (an operator): "not a Registered Employee", and the JWT is dropped', async (t) => {
  const operator = await ctx.jwtFor(company.operatorId);
  await page.goto(`${address}/console#jwt=${operator}`);
  await page.getByText(NOT_AN_EMPLOYEE).waitFor();
  t.ok(await page.getByRole('heading', { name: 'Sign in' }).isVisible(), 'back at the sign-in form');
  t.equal(await storedJwt(), null, 'the JWT is forgotten');
  t.equal(await focused(page), 'jwt', 'focus where the next JWT goes');
  await screenshot(page, '06-not-an-employee');
  await checkAccessibility(t, page, 'sign-in with an error');
});

t.test('an expired or invalid JWT pasted: "sign in again"', async (t) => {
  const expired = await ctx.jwtFor(company.employeeId, { ttlSeconds: 60, now: new Date(ctx.clock.now().getTime() - 3_600_000) });
  const cases: Array<[string, string]> = [
    ['expired', expired],
    ['not a JWT', 'hello'],
    ['signed with another key', `${expired.slice(0, -4)}AAAA`],
  ];
  for (const [label, credential] of cases) {
    await page.getByLabel('Your Registered Employee JWT').fill(credential);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByText(SESSION_ENDED).waitFor();
    t.equal(await signInError(), SESSION_ENDED, label);
    t.equal(await storedJwt(), null, `${label}: dropped`);
  }
  await screenshot(page, '07-session-expired');
});

t.test('a session that expires while in use: the next call ends it with "sign in again"', async (t) => {
  const shortLived = await ctx.jwtFor(company.employeeId, { ttlSeconds: 120 });
  await page.getByLabel('Your Registered Employee JWT').fill(shortLived);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('No tokens yet: create one.').waitFor();
  await world.setTime(new Date(ctx.clock.now().getTime() + 10 * 60_000));
  await page.getByLabel('Show').selectOption('active');
  await page.getByText(SESSION_ENDED).waitFor();
  t.ok(await page.getByRole('heading', { name: 'Sign in' }).isVisible());
  t.notOk(await page.locator('#tokens').isVisible(), 'the list is gone');
  t.equal(await storedJwt(), null, 'the JWT is dropped');
});

t.test('the form says what to fix, and shows the service’s 400 message', async (t) => {
  await page.getByLabel('Your Registered Employee JWT').fill(world.jwt);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Create a token' }).click();
  await page.getByRole('button', { name: 'Create token' }).click();
  t.equal(await page.locator('#create-error').textContent(), 'Give the token a name.');
  t.equal(await focused(page), 'token-name', 'focus on the field at fault');
  t.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');
  await page.getByLabel('Name').fill('Dashboard');
  await page.getByRole('button', { name: 'Create token' }).click();
  t.equal(await page.locator('#create-error').textContent(), 'Choose at least one scope.');
  await page.getByLabel('revenue', { exact: true }).check();
  await page.getByLabel('On a date:').check();
  await page.getByRole('button', { name: 'Create token' }).click();
  t.equal(await page.locator('#create-error').textContent(), 'Choose an expiry date in the future.');
  await page.getByLabel('In 90 days').check();

  // the unit disappears between loading the form and sending it: the service refuses, in words
  const [, unitB] = company.unitIds;
  await page.getByLabel('Only the units chosen below').check();
  await page.getByLabel('Console Cold unit B (Main market)').check();
  await ctx.db.pool.query('UPDATE cooling_units SET deleted = true, deleted_at = now() WHERE id = $1', [unitB]);
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByText(`Not a live cooling unit of your company: ${unitB}.`).waitFor();
  t.ok(await page.locator('#create').isVisible(), 'the form stays, with what was typed');
  t.equal(await page.getByLabel('Name').inputValue(), 'Dashboard');
  await screenshot(page, '08-create-refused');
  await ctx.db.pool.query('UPDATE cooling_units SET deleted = false, deleted_at = NULL WHERE id = $1', [unitB]);
  await page.getByRole('button', { name: 'Cancel' }).click();
  t.equal(await focused(page), 'new-token', 'Cancel returns to the list');
});

t.test('409: a token rotated elsewhere meanwhile cannot be rotated again; the dialog says why', async (t) => {
  const { body: token } = await world.api<{ id: string }>('POST', '/api/v1/api-tokens', { name: 'Raced', scopes: ['users'] });
  await page.getByLabel('Show').selectOption('active');
  const row = page.locator(`tr[data-token-id="${token.id}"]`);
  await row.getByRole('button', { name: 'Rotate “Raced”' }).click();
  t.equal((await world.api('POST', `/api/v1/api-tokens/${token.id}/rotate`)).status, 201, 'rotated by someone else');
  const dialog = page.getByRole('dialog', { name: 'Rotate this token?' });
  await dialog.getByRole('button', { name: 'Rotate token' }).click();
  await dialog.getByText('This token was already rotated; rotate its replacement instead.').waitFor();
  t.ok(await dialog.isVisible(), 'the dialog stays open with the reason');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  // Chromium logs every 4xx it fetched as a console error: those are this file's point
  const problems = world.problems.filter((text) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(text));
  t.strictSame(problems, [], 'no other console error (no CSP violation, no script error)');
});

t.test('429: the management write limit, with the wait from Retry-After', async (t) => {
  const limited = await startConsole(t, {}, { realRateLimits: true });
  const headers = { authorization: `Bearer ${limited.jwt}` };
  for (let i = 0; i < 120; i++) {
    await limited.ctx.app.inject({ method: 'POST', url: '/api/v1/api-tokens/00000000-0000-0000-0000-000000000000/revoke', headers });
  }
  await limited.page.goto(`${limited.address}/console#jwt=${limited.jwt}`);
  await limited.page.getByRole('button', { name: 'Create a token' }).click();
  await limited.page.getByLabel('Name').fill('One too many');
  await limited.page.getByLabel('users', { exact: true }).check();
  await limited.page.getByRole('button', { name: 'Create token' }).click();
  const message = limited.page.locator('#create-error');
  await message.getByText(/^Too many requests: wait \d+ s and try again\.$/).waitFor();
  const seconds = Number(/wait (\d+) s/.exec((await message.textContent())!)![1]);
  t.ok(seconds >= 1 && seconds <= 60, `the wait is the window's rest: ${seconds} s`);
  await screenshot(limited.page, '09-rate-limited');
});

t.test('503: the shared store is away, so a rotation cannot be guaranteed: "try again in N s"', async (t) => {
  const degraded = await startConsole(t, { REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
  const { body: token } = await degraded.api<{ id: string }>('POST', '/api/v1/api-tokens', { name: 'Needs Redis', scopes: ['users'] });
  await degraded.page.goto(`${degraded.address}/console#jwt=${degraded.jwt}`);
  await degraded.page.locator(`tr[data-token-id="${token.id}"]`).getByRole('button', { name: 'Rotate “Needs Redis”' }).click();
  const dialog = degraded.page.getByRole('dialog', { name: 'Rotate this token?' });
  await dialog.getByRole('button', { name: 'Rotate token' }).click();
  await dialog.getByText('The service is temporarily unavailable, try again in 5 s.').waitFor();
  t.ok(await dialog.isVisible(), 'said in the dialog');
  await screenshot(degraded.page, '10-unavailable');
  const after = (await degraded.api<{ replaced_by: string | null }>('GET', `/api/v1/api-tokens/${token.id}`)).body;
  t.equal(after.replaced_by, null, 'and indeed nothing was rotated');
});
