// A token's usage in the console, in real Chromium against the real service: the Usage dialog
// draws the last 30 days as stacked bars (one per day, each answer class with a pattern of its
// own, axes labelled, a legend naming the classes), says the totals in words, and has the same
// figures as a table and by route, with the client the token was last used from; accessible (axe).
import t from 'tap';
import { checkAccessibility, focused, screenshot, startConsole } from './helpers.js';

const world = await startConsole(t);
const { page, ctx, address } = world;
const { body: token } = await world.api<{ id: string; name: string; token: string }>('POST', '/api/v1/api-tokens', {
  name: 'Warehouse ETL',
  scopes: ['users'],
});
const data = (path: string) =>
  fetch(new URL(path, address), { headers: { authorization: `Bearer ${token.token}`, 'user-agent': 'warehouse-etl/4.2' } });

// two days of traffic: yesterday 3 answered, today 2 answered and 1 refused (a bad period)
await world.setTime(new Date(ctx.clock.now().getTime() - 24 * 3600_000));
for (let i = 0; i < 3; i++) await data('/api/v1/analytics/users');
await world.setTime(new Date(ctx.clock.now().getTime() + 24 * 3600_000));
for (let i = 0; i < 2; i++) await data('/api/v1/analytics/users');
await data('/api/v1/analytics/users?period=fortnight');
await ctx.app.lastUsed.flush();

t.test('the Usage dialog: a 30-day chart, its legend and axes, the figures as a table', async (t) => {
  await page.goto(`${address}/console#jwt=${world.jwt}`);
  const row = page.locator(`tr[data-token-id="${token.id}"]`);
  await row.getByRole('button', { name: 'Usage of “Warehouse ETL”' }).click();
  const dialog = page.getByRole('dialog', { name: 'Usage of “Warehouse ETL”' });
  await dialog.waitFor();
  await page
    .locator('#usage-summary')
    .getByText(/^6 requests from/)
    .waitFor();
  t.equal(await focused(page), 'dialog:usage-dialog close-usage', 'focus in the dialog');
  t.match(
    await page.locator('#usage-summary').textContent(),
    /6 requests from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d \(UTC\): 5 answered \(2xx\), 1 refused \(4xx\)\./,
  );

  const chart = page.locator('svg.usage-chart');
  t.equal(await chart.getAttribute('role'), 'img');
  t.match(await chart.getAttribute('aria-label'), /6 in all\. The table below has every day's figures\./);
  t.equal(await chart.locator('g.usage-bar').count(), 30, 'a bar slot for each of the 30 days');
  const segments = await chart
    .locator('rect.usage-segment')
    .evaluateAll((rects) =>
      rects.map((rect) => [rect.closest('g')!.getAttribute('data-date'), rect.getAttribute('data-class'), rect.getAttribute('fill')]),
    );
  t.equal(segments.length, 3, 'yesterday: one segment; today: two');
  t.ok(
    segments.every(([, name, fill]) => fill === `url(#usage-fill-${name})`),
    'every segment filled with its class’s pattern',
  );
  const patterns = await chart.locator('pattern').evaluateAll((nodes) => nodes.map((node) => node.querySelectorAll('path').length));
  t.strictSame(patterns, [0, 1, 1, 1], '2xx solid; 4xx, 429 and 5xx textured: told apart without colour');
  t.match(
    await chart.locator('g.usage-bar').last().locator('title').textContent(),
    /: 3 requests \(Answered \(2xx\): 2, Refused \(4xx\): 1\)$/,
  );
  const axisText = await chart.locator('.usage-axis text').allTextContents();
  t.ok(axisText.includes('Requests') && axisText.includes('Day (UTC)'), 'both axes labelled');
  t.ok(axisText.includes('0') && axisText.includes('5'), `a y scale from 0 to a round top (${axisText.join(', ')})`);
  t.strictSame(
    await page.locator('.usage-legend li').allTextContents(),
    [' Answered (2xx)', ' Refused (4xx)', ' Rate limited (429)', ' Failed (5xx)'],
    'a legend naming each class',
  );
  t.match(await page.locator('#usage-client').innerText(), /Last used[\s\S]*from 127\.0\.0\.1, warehouse-etl\/4\.2/);

  await page.getByText('The figures as a table').click();
  const rows = await page.locator('#usage-rows tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent)));
  t.equal(rows.length, 2, 'the two days with requests, newest first');
  t.strictSame(rows[0]!.slice(1), ['3', '2', '1', '0', '0', '/api/v1/analytics/users']);
  t.strictSame(rows[1]!.slice(1), ['3', '3', '0', '0', '0', '/api/v1/analytics/users']);
  t.strictSame(await page.locator('#usage-endpoint-rows tr').first().locator('th, td').allTextContents(), [
    '/api/v1/analytics/users',
    '6',
    '5',
    '1',
    '0',
    '0',
  ]);
  await screenshot(page, '12-token-usage');
  await checkAccessibility(t, page, 'usage dialog');

  await page.keyboard.press('Escape');
  t.notOk(await dialog.isVisible(), 'Escape closes it');
  t.equal(
    await page.evaluate<string | undefined>('document.activeElement?.getAttribute("aria-label")'),
    'Usage of “Warehouse ETL”',
    'focus back on the opener',
  );
  t.strictSame(world.problems, [], 'no console error (CSP included)');
});
