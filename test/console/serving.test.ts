// /console is served by the service itself, from memory, with strict headers on every answer: the
// page (never cached), its hashed assets (cached for good), and nothing else under that path.
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { createTestApp } from '../helpers/app.js';

const ctx = await createTestApp(t);
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const page = readFileSync('console/build/index.html', 'utf8');
const assets = [...page.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1]!);

function strictHeaders(t: Test, headers: Record<string, unknown>, label: string) {
  t.equal(headers['content-security-policy'], CSP, `${label}: CSP`);
  t.equal(headers['x-frame-options'], 'DENY', `${label}: X-Frame-Options`);
  t.equal(headers['referrer-policy'], 'no-referrer', `${label}: Referrer-Policy`);
  t.equal(headers['x-content-type-options'], 'nosniff', `${label}: nosniff`);
}

t.test('the page at /console and /console/: HTML, never cached', async (t) => {
  for (const url of ['/console', '/console/']) {
    const response = await ctx.app.inject({ url });
    t.equal(response.statusCode, 200, url);
    t.equal(response.headers['content-type'], 'text/html; charset=utf-8');
    t.equal(response.headers['cache-control'], 'no-store');
    strictHeaders(t, response.headers, url);
    t.equal(response.body, page, 'the committed build');
    const head = await ctx.app.inject({ method: 'HEAD', url });
    t.equal(head.statusCode, 200, `HEAD ${url}`);
  }
});

t.test('its assets: the right type, cached for a year (their names change with their content)', async (t) => {
  t.ok(assets.length >= 2, assets.join(', '));
  for (const url of assets) {
    const response = await ctx.app.inject({ url });
    t.equal(response.statusCode, 200, url);
    t.match(response.headers['content-type'], url.endsWith('.js') ? /^text\/javascript; charset=utf-8$/ : /^text\/css; charset=utf-8$/);
    t.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable');
    strictHeaders(t, response.headers, url);
    t.equal(response.body, readFileSync(`console/build${url.slice('/console'.length)}`, 'utf8'));
  }
});

t.test('nothing else: unknown assets and path tricks are 404 JSON, with the strict headers', async (t) => {
  for (const url of [
    '/console/assets/nope.js',
    '/console/assets/..%2Findex.html',
    '/console/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    '/console/assets/..%2F..%2F..%2Fpackage.json',
    '/console/assets/index.html',
  ]) {
    const response = await ctx.app.inject({ url });
    t.equal(response.statusCode, 404, url);
    t.equal(response.json<{ error: { code: string } }>().error.code, 'not_found');
    t.equal(response.headers['cache-control'], 'no-store');
    strictHeaders(t, response.headers, url);
  }
  for (const url of ['/console/../package.json', '/console/index.html', '/console/src/main.ts', '/console/vite.config.ts']) {
    const response = await ctx.app.inject({ url });
    t.equal(response.statusCode, 404, url);
    t.notMatch(response.body, /coldtrack-api|defineConfig|import /, `${url}: no file content`);
  }
});

t.test('compressed for clients that ask', async (t) => {
  const script = assets.find((url) => url.endsWith('.js'))!;
  const response = await ctx.app.inject({ url: script, headers: { 'accept-encoding': 'gzip' } });
  t.equal(response.headers['content-encoding'], 'gzip');
});

t.test('not rate limited, not in the OpenAPI document', async (t) => {
  const statuses = new Set<number>();
  for (let i = 0; i < 50; i++) statuses.add((await ctx.app.inject({ url: '/console' })).statusCode);
  t.strictSame([...statuses], [200]);
  const document = (await ctx.app.inject({ url: '/openapi.json' })).json<{ paths: Record<string, unknown> }>();
  t.notOk(Object.keys(document.paths).some((path) => path.startsWith('/console')));
});
