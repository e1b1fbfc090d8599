// `npm run export` refuses what it cannot do, clearly: a bad argument is one line and exit 2,
// before any request; the service's 401, 403 and 404 stop the export with the reason (exit 1),
// after one request each: they are never retried.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runExport } from '../client/run-export.js';
import { createExportWorld, YEAR } from '../client/world.js';

const world = await createExportWorld(t, { readings: false });
const root = await mkdtemp(join(tmpdir(), 'coldtrack-export-errors-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const out = (name: string) => ['--out', join(root, name)];
const range = ['--from', YEAR.from, '--to', YEAR.to];

t.test('bad arguments: one line naming the problem, exit 2, no request', async (t) => {
  const cases: Array<[string, string[], RegExp, { token?: string | null }?]> = [
    ['no --out', [...range], /^export: --out is required \(--help for usage\)$/],
    ['not a date', ['--from', '2025-13-01', '--to', YEAR.to, ...out('a')], /^export: --from must be a date YYYY-MM-DD, not "2025-13-01"/],
    ['no such day', ['--from', '2025-02-29', '--to', YEAR.to, ...out('a')], /--from must be a date YYYY-MM-DD, not "2025-02-29"/],
    ['from after to', ['--from', '2025-12-31', '--to', '2025-01-01', ...out('a')], /--from \(2025-12-31\) is after --to \(2025-01-01\)/],
    ['aggregation', [...range, '--aggregation', 'weekly', ...out('a')], /--aggregation must be raw, hourly or daily, not "weekly"/],
    ['format', [...range, '--format', 'xlsx', ...out('a')], /--format must be csv or ndjson, not "xlsx"/],
    ['units', [...range, '--units', '1,two', ...out('a')], /--units must be all or a comma-separated list of unit ids, not "1,two"/],
    ['page size', [...range, '--page-size', '5000', ...out('a')], /--page-size must be a whole number from 1 to 1000, not "5000"/],
    ['unknown option', [...range, '--unit', '1', ...out('a')], /^export: Unknown option '--unit'/],
    [
      'a token argument',
      [...range, '--token', world.token, ...out('a')],
      /the token is read from COLDTRACK_TOKEN only, never from the command line/,
    ],
    ['no token in the environment', [...range, ...out('a')], /^export: set COLDTRACK_TOKEN to an API token/, { token: null }],
  ];
  const runs = await Promise.all(cases.map(([, args, , options]) => runExport(world, args, options)));
  cases.forEach(([name, , message], i) => {
    const run = runs[i]!;
    // what the command did instead, should it ever not exit 2 (stdout and the signal included)
    const otherwise = run.code === 2 ? '' : ` (exit ${run.code ?? run.signal}; stdout ${JSON.stringify(run.stdout.slice(0, 200))})`;
    t.equal(run.code, 2, `${name}: exit 2${otherwise}`);
    t.equal(run.stderr.trimEnd().split('\n').length, 1, `${name}: one line`);
    t.match(run.stderr.trimEnd(), message, `${name}: ${run.stderr.trimEnd()}`);
    t.equal(run.requests, 0, `${name}: no request`);
    if (name === 'a token argument') t.notMatch(run.stderr, world.token, 'the token is not echoed');
  });
});

t.test('the service refuses: the reason, exit 1, one request (never retried)', async (t) => {
  const usersOnly = await world.issue({ scopes: ['users'] });
  const unitOfB = world.b.unitIds[0]!;
  const cases: Array<[string, string, string[], RegExp]> = [
    [
      '401',
      `ctk_${'A'.repeat(49)}`,
      [...range, ...out('401')],
      /^export stopped: 401 unauthorized: .*\(is COLDTRACK_TOKEN right, and not revoked or expired\?\)/m,
    ],
    [
      '403',
      usersOnly.token,
      [...range, '--units', String(world.unitIds[0]), ...out('403')],
      // refused at the first request: the change-feed cursor a new export takes before any unit
      /^export stopped: 403 insufficient_scope: .* \(the token needs the sensor_data scope\)/m,
    ],
    [
      '404',
      world.token,
      [...range, '--units', String(unitOfB), ...out('404')],
      new RegExp(`^export stopped: cooling unit ${unitOfB}: 404 not_found: .*\\(not a unit this token may read\\)`, 'm'),
    ],
  ];
  for (const [status, token, args, reason] of cases) {
    const run = await runExport(world, args, { token });
    t.equal(run.code, 1, `${status}: exit 1`);
    t.match(run.stderr, reason, `${status}: ${run.stderr.trim()}`);
    // a new export's first request takes the change-feed cursor (any token with sensor_data may)
    t.same(
      run.statuses.filter((answer) => answer >= 400),
      [Number(status)],
      `${status}: one request refused, never retried`,
    );
    t.equal(run.requests, status === '404' ? 2 : 1, `${status}: ${status === '404' ? 'the cursor, then the unit' : 'one request'}`);
  }
});
