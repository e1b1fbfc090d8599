// A token's IP allow-list in the console, in real Chromium against the real service: the optional
// field at creation (one per line or comma separated), the form's hints for what cannot be an
// address, the service's refusal shown as it words it (it decides), the list on the token's row,
// and in the rotate dialog among what the replacement keeps.
import t from 'tap';
import { checkAccessibility, screenshot, startConsole } from './helpers.js';
import type { TokenJson } from '../helpers/tokens.js';

const world = await startConsole(t);
const { page, address, jwt } = world;

await page.goto(`${address}/console#jwt=${jwt}`);
await page.getByText('No tokens yet: create one.').waitFor();

const field = () => page.getByLabel('Allowed IP addresses (optional)');
const createError = () => page.locator('#create-error').textContent();

async function openForm(name: string) {
  await page.getByRole('button', { name: 'Create a token' }).click();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('users', { exact: true }).check();
}

t.test('the form hints at what cannot be an address before anything is sent', async (t) => {
  await openForm('Hinted');
  const sent = world.requests.length;
  await field().fill('203.0.113.7\noffice router');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByText('“office” is not an IP address or network').waitFor();
  t.equal(await field().getAttribute('aria-invalid'), 'true', 'the field is marked');
  t.equal(await page.evaluate<string | undefined>('document.activeElement?.id'), 'allowed-ips', 'focus moves to the field');
  await field().fill(Array.from({ length: 51 }, (_, i) => `10.${i}.0.0/16`).join(', '));
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByText('List at most 50 addresses or networks (51 given).').waitFor();
  t.equal(world.requests.length, sent, 'no request left the page');
});

t.test("the service's refusal is shown as it words it, naming the entry", async (t) => {
  await field().fill('10.1.2.3/16');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByText('allowed_ips.0 is a CIDR with host bits set: "10.1.2.3/16" (its network is 10.1.0.0/16)').waitFor();
  t.match(await createError(), /host bits set/);
  const { body } = await world.api<{ data: TokenJson[] }>('GET', '/api/v1/api-tokens');
  t.equal(body.data.length, 0, 'nothing created');
  await page.getByRole('button', { name: 'Cancel' }).click();
});

t.test('create a token with a list (lines and commas mixed); the row shows it, normalised', async (t) => {
  await openForm('Office only');
  await field().fill('10.1.0.0/16, 2001:DB8::/32\n\n198.51.100.7 ,');
  await screenshot(page, '08-create-allowed-ips');
  await checkAccessibility(t, page, 'create form with an allow-list');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByRole('dialog', { name: 'Copy your new token now' }).waitFor();
  const secret = await page.getByLabel('Token', { exact: true }).inputValue();
  await page.getByRole('button', { name: 'I have stored it: close' }).click();

  const { body } = await world.api<{ data: TokenJson[] }>('GET', '/api/v1/api-tokens');
  const created = body.data.find((token) => token.name === 'Office only')!;
  t.strictSame(created.allowed_ips, ['10.1.0.0/16', '2001:db8::/32', '198.51.100.7/32'], 'sent as three entries, stored normalised');
  const row = page.locator(`tr[data-token-id="${created.id}"]`);
  await row.waitFor();
  t.strictSame(
    await row.locator('td.addresses li').allTextContents(),
    ['10.1.0.0/16', '2001:db8::/32', '198.51.100.7/32'],
    'the row lists the networks',
  );
  t.equal(await world.dataStatus(secret), 403, 'and the service enforces them: this test runs from 127.0.0.1');

  await openForm('Anywhere');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByRole('dialog', { name: 'Copy your new token now' }).waitFor();
  await page.getByRole('button', { name: 'I have stored it: close' }).click();
  const anywhere = (await world.api<{ data: TokenJson[] }>('GET', '/api/v1/api-tokens')).body.data.find(
    (token) => token.name === 'Anywhere',
  )!;
  t.strictSame(anywhere.allowed_ips, [], 'the field left empty: no list');
  const anywhereRow = page.locator(`tr[data-token-id="${anywhere.id}"]`);
  await anywhereRow.waitFor();
  t.equal(await anywhereRow.locator('td.addresses').textContent(), 'Any address');
  await screenshot(page, '09-list-allowed-ips');
  await checkAccessibility(t, page, 'list with an allow-list');
});

t.test('rotating a token with a list: the dialog says the new token keeps it, and it does', async (t) => {
  const { body } = await world.api<{ data: TokenJson[] }>('GET', '/api/v1/api-tokens');
  const office = body.data.find((token) => token.name === 'Office only')!;
  const row = page.locator(`tr[data-token-id="${office.id}"]`);
  await row.getByRole('button', { name: 'Rotate “Office only”' }).click();
  const dialog = page.getByRole('dialog', { name: 'Rotate this token?' });
  await dialog.waitFor();
  t.equal(
    await dialog.locator('dt', { hasText: 'Allowed from' }).locator('xpath=following-sibling::dd[1]').textContent(),
    '10.1.0.0/16, 2001:db8::/32, 198.51.100.7/32',
    'the dialog lists the allowed addresses the new token keeps',
  );
  await screenshot(page, '10-rotate-allowed-ips');
  await checkAccessibility(t, page, 'rotate dialog with an allow-list');
  await dialog.getByRole('button', { name: 'Rotate token' }).click();
  await page.getByRole('dialog', { name: 'Copy your new token now' }).waitFor();
  await page.getByRole('button', { name: 'I have stored it: close' }).click();
  const replacement = (await world.api<TokenJson & { replaced_by: string }>('GET', `/api/v1/api-tokens/${office.id}`)).body.replaced_by;
  const kept = (await world.api<TokenJson>('GET', `/api/v1/api-tokens/${replacement}`)).body;
  t.strictSame(kept.allowed_ips, office.allowed_ips, 'as it does');
});

t.test('no console error but the refused request', async (t) => {
  // the browser logs the one refused request (the 400 above); anything else is a fault
  t.strictSame(
    world.problems,
    ['Failed to load resource: the server responded with a status of 400 (Bad Request)'],
    'no other console error (no CSP violation, no script error)',
  );
});
