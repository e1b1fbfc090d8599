// The console names who is signed in, and shows a token's history, in real Chromium against the
// real service: the header says the employee's and the company's names (GET /api/v1/me, not ids
// read out of the JWT); a token's History dialog lists its audit events newest first (what, when,
// who, from which address and browser), a rotation on both tokens, another employee by name and
// the signed-in one as "You"; focus goes in and back; accessible (axe).
import t from 'tap';
import { checkAccessibility, focused, focusSettles, screenshot, startConsole } from './helpers.js';
import type { TokenJson } from '../helpers/tokens.js';

const world = await startConsole(t);
const { page, ctx, company, address } = world;
const {
  rows: [ada],
} = await ctx.db.pool.query<{ id: number }>(
  "INSERT INTO users (role, company_id, first_name, last_name) VALUES ('REGISTERED_EMPLOYEE', $1, 'Ada', 'Obi') RETURNING id",
  [company.companyId],
);
const adaJwt = await ctx.jwtFor(ada!.id);
/** The history's rows as shown: each cell's visible text (innerText keeps the line breaks). */
const historyCells = () =>
  page.evaluate<string[][]>(
    '[...document.querySelectorAll("#history-rows tr")].map((tr) => [...tr.children].map((cell) => cell.innerText))',
  );

// created by the signed-in employee, rotated by Ada (an hour's grace), the replacement revoked in the page below
const { body: original } = await world.api<TokenJson>('POST', '/api/v1/api-tokens', { name: 'Partner ERP', scopes: ['users'] });
ctx.clock.advance(5 * 60_000);
await page.clock.setFixedTime(ctx.clock.now());
const rotatedAt = ctx.clock.now().getTime();
const rotation = await fetch(new URL(`/api/v1/api-tokens/${original.id}/rotate`, address), {
  method: 'POST',
  headers: { authorization: `Bearer ${adaJwt}`, 'content-type': 'application/json', 'user-agent': 'ada-ops-script/2.1' },
  body: JSON.stringify({ grace_period_seconds: 3600 }),
});
const replacement = (await rotation.json()) as TokenJson;

t.test('the header names the signed-in employee and the company', async (t) => {
  await page.goto(`${address}/console#jwt=${world.jwt}`);
  await page.locator(`tr[data-token-id="${replacement.id}"]`).waitFor();
  t.equal(await page.locator('#who').textContent(), 'Signed in as Console Cold registered_employee at Console Cold');
  t.notOk((await page.locator('header').textContent())!.includes(`user ${company.employeeId}`), 'no bare user id');
});

t.test("revoke in the page, then the replacement's history: revoked by you, born of Ada's rotation", async (t) => {
  const row = page.locator(`tr[data-token-id="${replacement.id}"]`);
  await row.getByRole('button', { name: 'Revoke “Partner ERP”' }).click();
  await page.getByRole('dialog', { name: 'Revoke this token?' }).getByRole('button', { name: 'Revoke token' }).click();
  await page.getByText('“Partner ERP” is revoked').waitFor();
  await row.locator('.state.revoked').waitFor();

  const opener = row.getByRole('button', { name: 'History of “Partner ERP”' });
  t.strictSame(
    await row.getByRole('button').allTextContents(),
    ['History', 'Usage'],
    'a revoked token offers its history and usage, nothing else',
  );
  await opener.click();
  const dialog = page.getByRole('dialog', { name: 'History of “Partner ERP”' });
  await dialog.waitFor();
  await page.locator('#history-summary').getByText('2 events, newest first').waitFor();
  t.equal(await focused(page), 'dialog:history-dialog close-history', 'focus in the dialog');
  const rows = await historyCells();
  t.equal(rows.length, 2);
  const [revoked, born] = rows as [string[], string[]];
  t.match(revoked[0], /^just now\n\d{4}-\d\d-\d\d \d\d:\d\d UTC$/, 'when: relative, then absolute');
  t.equal(revoked[1], 'Revoked');
  t.equal(revoked[2], 'You', 'the signed-in employee');
  t.match(revoked[3], /^127\.0\.0\.1\nMozilla\/5\.0 .{40,}…$/, 'from: the address and the browser, cut to a line');
  t.match(
    await page.locator('#history-rows tr').first().locator('.agent').getAttribute('title'),
    /HeadlessChrome/,
    'the whole User-Agent on hover',
  );
  t.equal(born[1], `Created by rotating ${original.id.slice(0, 8)}`);
  t.equal(born[2], `Ada Obi (user ${ada!.id})`, 'another employee, by name');
  t.match(born[3], /^127\.0\.0\.1\nada-ops-script\/2\.1$/);
  await screenshot(page, '11-token-history');
  await checkAccessibility(t, page, 'history dialog');

  await page.keyboard.press('Escape');
  t.notOk(await dialog.isVisible(), 'Escape closes it');
  t.equal(await focusSettles(page, 'button'), 'button', 'focus back on the History button');
  t.equal(await page.evaluate<string | undefined>('document.activeElement?.getAttribute("aria-label")'), 'History of “Partner ERP”');
});

t.test("the old token's history: created by you, rotated by Ada with its end", async (t) => {
  await page.locator(`tr[data-token-id="${original.id}"]`).getByRole('button', { name: 'History of “Partner ERP”' }).click();
  await page.locator('#history-summary').getByText('2 events, newest first').waitFor();
  const cells = (await historyCells()).map((cells) => cells.slice(1, 3));
  const end = new Date(rotatedAt + 3_600_000).toISOString();
  t.strictSame(cells, [
    [
      `Rotated: replaced by ${replacement.id.slice(0, 8)}; this token ends ${end.slice(0, 10)} ${end.slice(11, 16)} UTC`,
      `Ada Obi (user ${ada!.id})`,
    ],
    ['Created', 'You'],
  ]);
  await page.getByRole('button', { name: 'Close' }).click();
  t.notOk(await page.getByRole('dialog', { name: 'History of “Partner ERP”' }).isVisible());
});

t.test("a leaked token's history: the report's events, with where it was found", async (t) => {
  const { body: leaked } = await world.api<TokenJson>('POST', '/api/v1/api-tokens', { name: 'Leaked ERP', scopes: ['users'] });
  // the two events a signed leak report records (test/routes/token-leaks/), as the table takes them
  const url = 'https://github.com/octo/leaky/blob/0123abc/config/production.env';
  for (const action of ['token.leak_reported', 'token.revoked_leaked']) {
    await ctx.db.pool.query(
      `INSERT INTO token_audit_events (company_id, occurred_at, action, token_id, actor_type, actor_id, client_ip, details)
       VALUES ($1, $2, $3, $4, 'leak_reporter', 'github', '140.82.115.7', $5)`,
      [company.companyId, ctx.clock.now(), action, leaked.id, { url, source: 'commit' }],
    );
  }
  // the JWT stays in the tab's sessionStorage (console/src/session.ts): a reload lists the new token
  await page.reload();
  const row = page.locator(`tr[data-token-id="${leaked.id}"]`);
  await row.waitFor();
  await row.getByRole('button', { name: 'History of “Leaked ERP”' }).click();
  await page.locator('#history-summary').getByText('3 events, newest first').waitFor();
  const cells = (await historyCells()).map((cells) => cells.slice(1, 3));
  t.strictSame(cells, [
    [`Revoked: reported as leaked\nFound at ${url} (commit)`, 'Leak report from github'],
    [`Reported as leaked\nFound at ${url} (commit)`, 'Leak report from github'],
    ['Created', 'You'],
  ]);
  t.equal(await page.locator('#history-rows a').count(), 0, 'the URL is text, not a link');
  await screenshot(page, '12-leaked-token-history');
  await checkAccessibility(t, page, 'history dialog with a leak');
  await page.getByRole('button', { name: 'Close' }).click();
});

t.test('no console error, no request elsewhere', async (t) => {
  t.strictSame(world.problems, []);
  t.ok(
    world.requests.every((url) => url.startsWith(address)),
    'every request to the service itself',
  );
});
