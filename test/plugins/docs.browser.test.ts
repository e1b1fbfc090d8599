// /docs in a real browser: the reference renders every tag without a console error (its strict
// Content-Security-Policy allows nothing inline but swagger-ui's one hashed style) and names the
// one documented URL of the OpenAPI document, /openapi.json.
import t from 'tap';
import { createTestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';

t.test('/docs renders without console errors and points at /openapi.json', async (t) => {
  const ctx = await createTestApp(t);
  const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  page.on('pageerror', (error) => problems.push(error.message));
  const specRequests: string[] = [];
  page.on('request', (request) => request.url().includes('json') && specRequests.push(new URL(request.url()).pathname));

  const response = await page.goto(`${address}/docs/`);
  t.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'; script-src-attr 'none'/, 'a strict CSP');
  await page.getByText('Sensor data', { exact: true }).first().waitFor({ timeout: 15_000 });
  for (const tag of ['Operations', 'API tokens', 'Sensor data'])
    t.ok(await page.getByText(tag, { exact: true }).first().isVisible(), `tag ${tag} shown`);
  t.ok(await page.locator('a', { hasText: '/openapi.json' }).first().isVisible(), "the document's URL shown is /openapi.json");
  t.same([...new Set(specRequests)], ['/openapi.json'], 'the reference loads /openapi.json only');
  t.same(problems, [], 'no console error (CSP violations included)');
});
