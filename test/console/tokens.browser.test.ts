// The token console in real Chromium against the real service and PostgreSQL, as an employee uses
// it: signed in by the URL fragment, creates a restricted token and reads its secret once, finds it
// listed, rotates it with a grace period and revokes the replacement, each step proven with real
// data requests; accessible (axe) on the list, the form and the secret dialog; screenshots of each
// state. `UPDATE_DOCS_SCREENSHOT=1` also rewrites docs/console.png (shown in docs/employees.md).
import t from 'tap';
import { checkAccessibility, focused, focusSettles, pageHolds, screenshot, startConsole } from './helpers.js';
import type { TokenJson } from '../helpers/tokens.js';

const world = await startConsole(t);
const { page, ctx, company, address, jwt } = world;
const [unitA] = company.unitIds;
let created = { id: '', token: '' };
let replacement = { id: '', token: '' };

t.test('sign-in through the URL fragment: the JWT leaves the address bar at once and lives in this tab only', async (t) => {
  await page.goto(`${address}/console#jwt=${jwt}`);
  await page.getByText('No tokens yet: create one.').waitFor();
  t.equal(page.url(), `${address}/console`, 'no fragment left in the URL');
  const history = await page.evaluate<string[]>('navigation.entries().map((entry) => entry.url)');
  t.notOk(
    history.some((url) => url.includes('jwt')),
    `nor in the history (replaced, not pushed): ${history.join(', ')}`,
  );
  t.equal(await page.evaluate<string>('document.cookie'), '', 'no cookie');
  t.equal(await page.evaluate<number>('localStorage.length'), 0, 'nothing in localStorage');
  t.equal(await page.evaluate<string | null>('sessionStorage.getItem("coldtrack-console-jwt")'), jwt, 'the tab’s sessionStorage only');
  t.equal(
    await page.locator('#who').textContent(),
    'Signed in as Console Cold registered_employee at Console Cold',
    'the employee and the company, by name',
  );
  t.equal(await page.locator('#token-rows').textContent(), 'No tokens yet: create one.');
  await screenshot(page, '01-list-empty');
  await checkAccessibility(t, page, 'empty list view');
});

t.test('create a restricted token; its secret is shown once, copied, and gone from the page on close', async (t) => {
  await page.getByRole('button', { name: 'Create a token' }).click();
  t.equal(await focused(page), 'create-title', 'focus moves to the form');
  await page.getByLabel('Name').fill('Partner ERP');
  await page.getByLabel('users', { exact: true }).check();
  await page.getByLabel('Only the units chosen below').check();
  await page.getByLabel('Console Cold unit A (Main market)').check();
  await page.getByLabel('Never').check();
  t.ok(
    await page.getByText('A token that never expires works until someone revokes it').isVisible(),
    'the warning for a token that never expires',
  );
  await screenshot(page, '02-create-form');
  await checkAccessibility(t, page, 'create form');
  await page.getByLabel('In 30 days').check();
  t.notOk(await page.getByText('A token that never expires').isVisible(), 'the warning goes with the choice');
  await page.getByRole('button', { name: 'Create token' }).click();

  const dialog = page.getByRole('dialog', { name: 'Copy your new token now' });
  await dialog.waitFor();
  const secret = await page.getByLabel('Token', { exact: true }).inputValue();
  t.match(secret, /^ctk_[0-9A-Za-z]{49}$/, 'the raw token');
  t.equal(await focused(page), 'dialog:secret-dialog copy-secret', 'focus is in the dialog, on Copy');
  t.match(await dialog.textContent(), /only time the token is shown/, 'the warning it will not be shown again');
  const curl = await page.getByLabel('Try it').inputValue();
  t.equal(curl, `curl -s '${address}/api/v1/analytics/users' -H 'Authorization: Bearer ${secret}'`, 'a ready curl line for its scope');
  await page.getByRole('button', { name: 'Copy token' }).click();
  await page.getByText('Copied.').waitFor();
  t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret, 'Copy puts the token on the clipboard');
  for (let i = 0; i < 5; i++) {
    await page.keyboard.press('Tab');
    t.notMatch(await focused(page), /^(?!dialog:|body)/, `Tab ${i + 1} stays in the dialog (the page behind is inert)`);
  }
  await screenshot(page, '03-secret-dialog');
  await checkAccessibility(t, page, 'secret dialog');

  const [listed] = (await world.api<{ data: TokenJson[] }>('GET', '/api/v1/api-tokens')).body.data;
  created = { id: listed!.id, token: secret };
  t.strictSame(listed!.cooling_unit_ids, [unitA], 'created restricted to the chosen unit');
  t.equal(listed!.expires_at, new Date(ctx.clock.now().getTime() + 30 * 86_400_000).toISOString(), 'expiring in 30 days');
  t.equal(await world.dataStatus(secret), 200, 'the token works');

  await page.getByRole('button', { name: 'I have stored it: close' }).click();
  t.notOk(await dialog.isVisible(), 'closed');
  t.notOk(await pageHolds(page, secret), 'the secret is nowhere in the page any more');
  t.notOk(await pageHolds(page, secret.slice(4, 20)), 'not even part of it');
  t.equal(await focusSettles(page, 'new-token'), 'new-token', 'focus is back where the flow started');
});

t.test('the list: name, scopes, units, allowed addresses, creator, created, expiry, last use', async (t) => {
  await ctx.app.lastUsed.flush();
  await world.setTime(new Date(ctx.clock.now().getTime() + 3 * 60_000));
  await page.getByLabel('Show').selectOption('active');
  // the list as rendered after the filter (and the clock) changed
  await page.getByText('1 active token', { exact: true }).waitFor();
  const row = page.locator(`tr[data-token-id="${created.id}"]`);
  const cells = await row.locator('th, td').allTextContents();
  t.match(cells[0], /^Partner ERPID [0-9a-f]{8}$/, 'name and short id');
  t.equal(cells[1], 'Active');
  t.equal(cells[2], 'users');
  t.equal(cells[3], 'Console Cold unit A (Main market)');
  t.equal(cells[4], 'Any address', 'no allow-list');
  t.match(cells[5], /^3 minutes ago\d{4}-\d\d-\d\d \d\d:\d\d UTCby you$/, 'created, by whom');
  t.match(cells[6], /^in 30 days\d{4}-/, 'expires: relative (30 days less 3 minutes, to the nearest day) and absolute');
  t.match(cells[7], /^3 minutes ago\d{4}-/, 'last used');
  t.equal(cells[8], '—', 'no rotation yet');
  t.equal(await page.locator('#list-summary').textContent(), '1 active token');
  await page.getByLabel('Show').selectOption('');
  await page.getByText('1 token', { exact: true }).waitFor();
});

t.test('rotate with a 1-hour grace: both tokens answer until it ends, then only the new one', async (t) => {
  const opener = page.locator(`tr[data-token-id="${created.id}"]`).getByRole('button', { name: 'Rotate “Partner ERP”' });
  await opener.click();
  const dialog = page.getByRole('dialog', { name: 'Rotate this token?' });
  await dialog.waitFor();
  t.equal(await focused(page), 'dialog:rotate-dialog input', 'focus on the grace period');
  t.equal(await page.locator('#rotate-text').textContent(), 'A new token replaces “Partner ERP”, with the same:');
  const keeps = await page.evaluate<string[]>(
    '[...document.querySelectorAll("#rotate-keeps dt")].map((dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}`)',
  );
  t.match(
    keeps,
    [
      'Scopes: users',
      'Units: Console Cold unit A (Main market)',
      'Allowed from: Any address',
      /^Expires: in 30 days \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)$/,
    ],
    'what the new token keeps, its allowed addresses included',
  );
  await dialog.getByLabel('1 hour').check();
  const rotatedAt = ctx.clock.now().getTime();
  await dialog.getByRole('button', { name: 'Rotate token' }).click();
  await page.getByRole('dialog', { name: 'Copy your new token now' }).waitFor();
  const secret = await page.getByLabel('Token', { exact: true }).inputValue();
  t.match(secret, /^ctk_/);
  t.not(secret, created.token, 'a new secret');
  await page.getByRole('button', { name: 'I have stored it: close' }).click();
  t.notOk(await pageHolds(page, secret), 'forgotten on close');
  t.match(await page.locator('#notice').textContent(), /“Partner ERP” is rotated: the old token stops working in 1 hour \(\d{4}-/);

  const old = (await world.api<TokenJson>('GET', `/api/v1/api-tokens/${created.id}`)).body;
  replacement = { id: old.replaced_by!, token: secret };
  const end = rotatedAt + 3_600_000;
  t.equal(old.expires_at, new Date(end).toISOString(), 'the old token ends an hour after the rotation');
  const oldRow = page.locator(`tr[data-token-id="${created.id}"]`);
  const newRow = page.locator(`tr[data-token-id="${replacement.id}"]`);
  await newRow.waitFor();
  t.match(await oldRow.textContent(), `Replaced by ${replacement.id.slice(0, 8)}`);
  t.match(await newRow.textContent(), `Rotated from ${created.id.slice(0, 8)}`);
  t.equal(await oldRow.getByRole('button', { name: /Rotate/ }).count(), 0, 'a rotated token offers no second rotation');
  await screenshot(page, '04-after-rotation');

  // each rotation link opens the token it names, alone in the list, focus on its row
  const listed = () => page.evaluate<string[]>('[...document.querySelectorAll("#token-rows tr")].map((tr) => tr.dataset.tokenId)');
  await oldRow.getByRole('link', { name: `Replaced by ${replacement.id.slice(0, 8)}` }).click();
  await page.getByText(`The token ID ${replacement.id.slice(0, 8)} alone`).waitFor();
  t.strictSame(await listed(), [replacement.id], '"Replaced by" opens the replacement');
  t.equal(await focused(page), 'th', 'focus on its row');
  await newRow.getByRole('link', { name: `Rotated from ${created.id.slice(0, 8)}` }).click();
  await page.getByText(`The token ID ${created.id.slice(0, 8)} alone`).waitFor();
  t.strictSame(await listed(), [created.id], '"Rotated from" opens the old token');
  t.equal(page.url(), `${address}/console`, 'nothing added to the address');
  await screenshot(page, '04b-rotation-link-opened');
  await checkAccessibility(t, page, 'a token opened by its rotation link');
  await page.getByRole('button', { name: 'Back to the list' }).click();
  await page.getByText('2 tokens', { exact: true }).waitFor();
  t.strictSame((await listed()).sort(), [created.id, replacement.id].sort(), 'back to the list');

  t.equal(await world.dataStatus(created.token), 200, 'right after: the old token answers');
  t.equal(await world.dataStatus(replacement.token), 200, 'and the new one');
  await world.setTime(new Date(end - 1000));
  t.equal(await world.dataStatus(created.token), 200, 'a second before the end: the old token still answers');
  await world.setTime(new Date(end));
  t.equal(await world.dataStatus(created.token), 401, 'at the end: refused');
  t.equal(await world.dataStatus(replacement.token), 200, 'the new one keeps answering');
  await page.getByLabel('Show').selectOption('expired');
  await page.getByText('1 expired token', { exact: true }).waitFor();
  t.equal(await oldRow.locator('td').first().textContent(), 'Expired', 'listed as expired');
  await oldRow.getByRole('link', { name: `Replaced by ${replacement.id.slice(0, 8)}` }).click();
  await page.getByText(`The token ID ${replacement.id.slice(0, 8)} alone`).waitFor();
  t.equal(await newRow.locator('td').first().textContent(), 'Active', 'a link opens its token outside the filter too');
  await page.getByRole('button', { name: 'Back to the list' }).click();
  await page.getByText('1 expired token', { exact: true }).waitFor();
  await page.getByLabel('Show').selectOption('');
  await page.getByText('2 tokens', { exact: true }).waitFor();
});

t.test('revoke: a confirmation first (Escape cancels), then the token is refused', async (t) => {
  const row = page.locator(`tr[data-token-id="${replacement.id}"]`);
  const opener = row.getByRole('button', { name: 'Revoke “Partner ERP”' });
  await opener.click();
  const dialog = page.getByRole('dialog', { name: 'Revoke this token?' });
  await dialog.waitFor();
  t.equal(await focused(page), 'dialog:revoke-dialog cancel-revoke', 'focus on Cancel, the safe choice');
  await page.keyboard.press('Escape');
  t.notOk(await dialog.isVisible(), 'Escape closes it');
  t.equal(await focusSettles(page, 'button'), 'button', 'focus back on the Revoke button');
  t.equal(await world.dataStatus(replacement.token), 200, 'nothing revoked');

  await opener.click();
  await dialog.getByRole('button', { name: 'Revoke token' }).click();
  await page.getByText('“Partner ERP” is revoked').waitFor();
  t.equal(await world.dataStatus(replacement.token), 401, 'the token is refused');
  await row.locator('.state.revoked').waitFor();
  t.equal(await row.locator('.state').textContent(), 'Revoked', 'listed as revoked');
  t.strictSame(
    await row.getByRole('button').allTextContents(),
    ['History', 'Usage'],
    'no action left on a revoked token, only its history and usage',
  );
  await screenshot(page, '05-after-revoke');

  // docs/employees.md's picture: a few tokens in every state
  const now = ctx.clock.now().getTime();
  await world.api('POST', '/api/v1/api-tokens', { name: 'Finance export', scopes: ['revenue', 'impact'], expires_at: null });
  await world.api('POST', '/api/v1/api-tokens', {
    name: 'Warehouse dashboard',
    scopes: ['utilization', 'sensor_data'],
    cooling_unit_ids: company.unitIds.slice(1),
    allowed_ips: ['198.51.100.0/24', '2001:db8:abcd::/48'],
    expires_at: new Date(now + 365 * 86_400_000).toISOString(),
  });
  await page.reload();
  await page.getByText('4 tokens', { exact: true }).waitFor();
  await screenshot(page, 'console', process.env.UPDATE_DOCS_SCREENSHOT ? 'docs/console.png' : undefined);
});

t.test('a token name is text, never markup; filters and pages', async (t) => {
  const hostile = '<img src=x onerror="window.pwned=1">';
  for (let i = 1; i <= 20; i++) await world.api('POST', '/api/v1/api-tokens', { name: `Batch ${i}`, scopes: ['revenue'] });
  // the newest, so on page 1 whatever the ids (tokens of one instant are ordered by their random id)
  ctx.clock.advance(1000);
  await world.api('POST', '/api/v1/api-tokens', { name: hostile, scopes: ['impact'] });
  await page.reload();
  await page.getByText('Page 1 of 2').waitFor();
  t.equal(await page.locator('#list-summary').textContent(), '25 tokens', 'still signed in after a reload (sessionStorage)');
  t.equal(await page.locator('#page-label').textContent(), 'Page 1 of 2');
  t.ok(await page.getByText(hostile, { exact: true }).isVisible(), 'the name shown as typed');
  t.equal(await page.evaluate<unknown>('window.pwned'), undefined, 'and never run');
  t.ok(await page.getByRole('button', { name: 'Previous page' }).isDisabled());
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByText('Page 2 of 2').waitFor();
  t.equal(await page.locator('#token-rows tr').count(), 5);
  t.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled());
  await page.getByLabel('Show').selectOption('revoked');
  await page.getByText('Page 1 of 1').waitFor();
  t.equal(await page.locator('#token-rows tr').count(), 1, 'the one revoked token');
  await checkAccessibility(t, page, 'list view with tokens');
});

t.test('a name wraps between words; only a long unbroken run breaks inside', async (t) => {
  const words = 'Warehouse dashboard for the northern distribution centre';
  const unbroken = 'PartnerErpProductionEuWestPrimaryDatacenterReplica';
  ctx.clock.advance(1000);
  await world.api('POST', '/api/v1/api-tokens', { name: words, scopes: ['utilization'] });
  await world.api('POST', '/api/v1/api-tokens', { name: unbroken, scopes: ['utilization'] });
  // a narrow window: the table's columns are squeezed, and the names must wrap
  await page.setViewportSize({ width: 900, height: 900 });
  await page.getByLabel('Show').selectOption('');
  await page.getByText(unbroken, { exact: true }).waitFor();
  // for each name: its words split across two lines, and how many lines it takes
  const layout = (name: string) =>
    page.evaluate<{ splitWords: string[]; lines: number }>(`(() => {
      const element = [...document.querySelectorAll('#token-rows .name')].find((candidate) => candidate.textContent === ${JSON.stringify(name)});
      const linesOf = (rects) => new Set([...rects].map((rect) => Math.round(rect.top))).size;
      const splitWords = [];
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.textContent.matchAll(/\\S+/g)) {
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          if (linesOf(range.getClientRects()) > 1) splitWords.push(match[0]);
        }
      }
      return { splitWords, lines: linesOf(element.getClientRects()) };
    })()`);
  const ordinary = await layout(words);
  t.ok(ordinary.lines > 1, `the words wrap (${ordinary.lines} lines)`);
  t.strictSame(ordinary.splitWords, [], 'between words: no word broken inside');
  const long = await layout(unbroken);
  t.ok(long.lines > 1, `the unbroken run breaks inside rather than widen the column (${long.lines} lines)`);
  await screenshot(page, '06-name-wrapping');
  await page.setViewportSize({ width: 1360, height: 900 });
});

t.test('the JWT never left the page but in the Authorization header; no console error (CSP included)', async (t) => {
  t.notOk(
    world.requests.some((url) => url.includes(jwt) || url.includes('jwt=')),
    'no request URL carries the JWT',
  );
  t.ok(
    world.requests.some((url) => url.startsWith(`${address}/api/v1/cooling-units`)),
    'units came from the API',
  );
  t.notOk(
    world.requests.some((url) => !url.startsWith(address) && !url.startsWith('data:')),
    'no other origin',
  );
  t.strictSame(world.problems, [], 'no console error');
});
