// The commands `npm start` prints run verbatim in bash, in order, against a real server: the
// token the create line returns is used and revoked by the later lines without any editing. With
// DATABASE_URL (no demo), the real `npm start` still prints where the service and its console are.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { demoBanner } from '../../src/seed/demo-banner.js';
import { createTestApp, TEST_JWT_SECRET } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { startServerProcess } from '../helpers/server-process.js';

const run = promisify(execFile);

t.test('every printed command runs verbatim and does what it says', async (t) => {
  const ctx = await createTestApp(t);
  const acme = await createCompany(ctx.db.pool, 'Banner Co');
  const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const banner = demoBanner(
    address.replace('://127.0.0.1', '://localhost'),
    {
      id: acme.companyId,
      name: 'Banner Co',
      employee_jwt: await ctx.jwtFor(acme.employeeId),
      cooling_unit_ids: acme.unitIds,
    },
    { databaseUrl: ctx.db.url },
  );

  const commands = banner
    .split('\n')
    .filter((line) => line.startsWith('  '))
    .map((line) => line.trim());
  t.ok(commands.length >= 10, `${commands.length} commands printed`);
  t.notMatch(banner, /<[a-z_]+>/, 'no placeholder to fill in by hand');
  // each command's output on its own line, then whether the token still works after the revoke
  const script = [
    'set -euo pipefail',
    ...commands.flatMap((command) => [command, 'echo']),
    `echo "after-revoke: $(curl -s -o /dev/null -w '%{http_code}' '${address}/api/v1/sensor-data' -H "Authorization: Bearer $TOKEN")"`,
    'echo "database: $DATABASE_URL"',
  ].join('\n');
  const { stdout } = await run('bash', ['-c', script], { timeout: 60_000 });
  const lines = stdout.split('\n').filter(Boolean);
  const created = JSON.parse(lines[0]!) as { id: string; token: string };
  t.match(created.token, /^ctk_/, 'the create line answers the new token');
  t.ok(
    lines.some((line) => line.includes(`"id":"${created.id}"`) && line.includes('"data"')),
    'the list shows it',
  );
  t.ok(lines.filter((line) => line.startsWith('{"id":"' + created.id)).length >= 2, 'retrieve answers it by the kept id');
  t.equal(lines.filter((line) => line.includes('"pagination"')).length, 4, 'the list and the three data pulls answer pages');
  t.ok(
    lines.some((line) => line.includes('"revoked":true')),
    'the revoke line revokes it',
  );
  t.ok(lines.includes('after-revoke: 401'), 'the revoked token is refused');
  t.ok(lines.includes(`database: ${ctx.db.url}`), 'the printed DATABASE_URL line exports the database');
});

t.test('the printed console URL opens the console, signed in by the JWT in its fragment', async (t) => {
  const ctx = await createTestApp(t);
  const acme = await createCompany(ctx.db.pool, 'Console Co');
  const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const jwt = await ctx.jwtFor(acme.employeeId);
  const banner = demoBanner(address, { id: acme.companyId, name: 'Console Co', employee_jwt: jwt, cooling_unit_ids: acme.unitIds });
  const line = banner.split('\n').find((text) => text.startsWith(`${address}/console`));
  t.ok(line, 'a line of its own, not indented (it is no command), that starts with the URL');
  const url = new URL(line!);
  t.equal(url.pathname, '/console');
  t.equal(url.search, '', 'nothing in the query string (it would reach the server and its logs)');
  t.equal(new URLSearchParams(url.hash.slice(1)).get('jwt'), jwt, 'the demo employee JWT in the fragment');
  const page = await fetch(new URL(url.pathname, address));
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  const list = await fetch(new URL('/api/v1/api-tokens', address), {
    headers: { authorization: `Bearer ${url.hash.slice('#jwt='.length)}` },
  });
  t.equal(list.status, 200, "the fragment's JWT signs in");
});

t.test('with DATABASE_URL, npm start prints the console address too (no JWT in it: nothing is seeded)', async (t) => {
  const db = await createTestDatabase(t);
  const server = await startServerProcess(t, { DATABASE_URL: db.url, JWT_SECRET: TEST_JWT_SECRET });
  const port = new URL(server.baseUrl).port;
  const consoleUrl = `http://localhost:${port}/console`;
  // printed once the server listens: the log line that says so may come a moment earlier
  for (let waited = 0; !server.output().includes(consoleUrl) && waited < 10_000; waited += 100) {
    await sleep(100);
  }
  const lines = server.output().split('\n');
  t.ok(lines.includes(consoleUrl), `a line of its own: ${consoleUrl}`);
  t.ok(
    lines.some((line) => line.startsWith(`ColdTrack API is running at http://localhost:${port} `)),
    'beside where the service is',
  );
  t.notMatch(server.output(), /#jwt=/, 'no JWT in the link: there is no demo employee');
  const page = await fetch(consoleUrl.replace('localhost', '127.0.0.1'));
  t.equal(page.status, 200, 'it serves the console');
  t.match(page.headers.get('content-type'), /^text\/html/);
});
