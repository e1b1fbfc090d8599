// The loadtest's plan without a deployment: how many tokens a rate needs, how each scenario deals
// its requests over them (every token the same share, whatever the list), and what its command
// line refuses (a JWT or token in an argument, an expired JWT, a bad tokens file, a scenario
// only the bench's own clusters can run) without repeating a secret.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { generateToken } from '../../src/tokens/format.js';
import type { Deployment } from '../../bench/kit/loadtest-deployment.js';
import {
  DEPLOYMENT_SCENARIOS,
  type LoadtestContext,
  MANAGEMENT_READS_PER_SECOND,
  PLANNED_PER_TOKEN_PER_MINUTE,
  readLoadtestOptions,
  scopesFor,
  tokensForRate,
  UsageError,
} from '../../bench/kit/loadtest-plan.js';

const scratch = mkdtempSync(join(tmpdir(), 'coldtrack-loadtest-plan-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

t.test('the tokens a rate needs keep each under 90 of its 100 requests a minute', async (t) => {
  t.same([1, 20, 50, 200].map(tokensForRate), [1, 14, 34, 134]);
  for (const rate of [1, 7, 20, 50, 333, 1000]) {
    t.ok(
      (rate * 60) / tokensForRate(rate) <= PLANNED_PER_TOKEN_PER_MINUTE,
      `${rate}/s: ${((rate * 60) / tokensForRate(rate)).toFixed(1)} a minute a token`,
    );
  }
});

const deployment: Deployment = {
  today: '2026-03-15',
  companyId: 7,
  unitIds: [11, 12, 13, 14, 15],
  sensor: {
    available: true,
    reason: '',
    firstDay: '2025-01-01',
    lastDay: '2026-03-14',
    units: [
      { id: 11, readingsPerDay: 192, kinds: 2 },
      { id: 12, readingsPerDay: 96, kinds: 1 },
    ],
    deepPages: 40,
  },
};

t.test('every scenario deals its requests over the tokens in whole laps, each token its share', async (t) => {
  const tokens = Array.from({ length: 14 }, (_, i) => `ctk_token${i}`);
  const context: LoadtestContext = {
    deployment,
    tokens,
    jwt: 'employee-jwt',
    rate: 20,
    seconds: 10,
    connections: 20,
    pathPrefix: '/gateway',
  };
  for (const scenario of DEPLOYMENT_SCENARIOS) {
    t.equal(scenario.unavailable(context), null, `${scenario.id} runs here`);
    for (const load of scenario.build(context)) {
      const name = `${scenario.id} (${load.label})`;
      t.ok(
        load.requests.every((request) => request.path.startsWith('/gateway/api/v1/')),
        `${name}: every path under the base URL's path`,
      );
      if (load.credentials === 'jwt') {
        t.ok(
          load.requests.every((request) => request.headers.authorization === 'Bearer employee-jwt'),
          `${name}: the employee's JWT`,
        );
        t.ok(load.rate <= MANAGEMENT_READS_PER_SECOND, `${name}: within the employee's reads (${load.rate}/s)`);
        continue;
      }
      t.equal(load.requests.length % tokens.length, 0, `${name}: ${load.requests.length} entries, whole laps of ${tokens.length} tokens`);
      t.ok(
        load.requests.every((request, i) => request.headers.authorization === `Bearer ${tokens[i % tokens.length]}`),
        `${name}: entry i with token i mod ${tokens.length}`,
      );
      t.equal(load.rate, 20, `${name}: at the rate asked`);
    }
  }
  t.same(
    scopesFor(DEPLOYMENT_SCENARIOS.filter((scenario) => ['small-page', 'management'].includes(scenario.id))),
    ['revenue'],
    'tokens get only the scopes the chosen scenarios read',
  );
});

t.test('the sensor scenarios stay within the history the probe found', async (t) => {
  const context: LoadtestContext = { deployment, tokens: ['ctk_a'], jwt: null, rate: 5, seconds: 10, connections: 5, pathPrefix: '' };
  const scenario = (id: string) => DEPLOYMENT_SCENARIOS.find((candidate) => candidate.id === id)!;
  const paths = (id: string) =>
    scenario(id)
      .build(context)
      .flatMap((load) => load.requests.map((request) => request.path));
  // unit 11: 192 readings a day over 30 days = 5,760: pages 1-5; unit 12: 2,880: pages 1-2
  t.same(
    paths('sensor-raw').map((path) => /cooling_unit_id=(\d+).*page=(\d+)$/.exec(path)!.slice(1).join(':')),
    ['11:1', '11:2', '11:3', '11:4', '11:5', '12:1', '12:2'],
  );
  t.ok(
    paths('sensor-raw').every((path) => path.includes('start_date=2026-02-13&end_date=2026-03-14')),
    'the last 30 days of the history',
  );
  t.match(paths('deep-walk'), [/page=1$/, /page=20$/], 'deep-walk: page 1, then the middle of 40 pages');
  t.equal(scenario('management').unavailable(context), 'not measured: it needs an employee JWT (--jwt-file or COLDTRACK_EMPLOYEE_JWT)');
  const without = {
    ...context,
    deployment: { ...deployment, sensor: { ...deployment.sensor, available: false, reason: 'no sensor readings' } },
  };
  t.equal(scenario('sensor-raw').unavailable(without), 'not measured: no sensor readings');
  const mixed = scenario('mixed').build(without)[0]!.requests;
  t.notOk(
    mixed.some((request) => request.path.includes('sensor-data')),
    'mixed reads no sensor-data when there is no history',
  );
});

t.test('the command line refuses secrets as arguments and says why in one line, without repeating them', async (t) => {
  const jwt = await mintEmployeeJwt({ secret: 'x'.repeat(40), userId: 3, ttlSeconds: 3600 });
  const expired = await mintEmployeeJwt({ secret: 'x'.repeat(40), userId: 3, ttlSeconds: 60, now: new Date(Date.now() - 3600_000) });
  const token = generateToken();
  const file = (name: string, text: string) => {
    const path = join(scratch, name);
    writeFileSync(path, text);
    return path;
  };
  const base = ['--base-url', 'https://staging.example'];
  const refusals: [string, string[], NodeJS.ProcessEnv, RegExp][] = [
    ['--jwt', [...base, '--jwt', jwt], {}, /never taken as arguments/],
    ['--token=', [...base, `--token=${token}`], {}, /never taken as arguments/],
    ['a JWT where a value goes', [...base, '--jwt-file', jwt], {}, /looks like a JWT or an API token/],
    ['a token as a positional', [...base, token], { COLDTRACK_EMPLOYEE_JWT: jwt }, /looks like a JWT or an API token/],
    ['a stray positional', [...base, 'stray'], { COLDTRACK_EMPLOYEE_JWT: jwt }, /1 unexpected argument/],
    ['no credential', base, {}, /an employee JWT is needed/],
    ['an expired JWT', [...base, '--jwt-file', file('expired.jwt', expired)], {}, /expired at .*: sign in again/],
    ['not a JWT', [...base, '--jwt-file', file('garbage.jwt', 'not a jwt')], {}, /does not hold a JWT/],
    [
      'a bad tokens file',
      [...base, '--tokens-file', file('tokens.txt', `${token}\n# a comment\nctk_notatoken\n`)],
      {},
      /line 3 of the --tokens-file is not an API token/,
    ],
    [
      'heavy-rollups',
      [...base, '--scenarios', 'heavy-rollups'],
      { COLDTRACK_EMPLOYEE_JWT: jwt },
      /heavy-rollups is not run against a deployment/,
    ],
    [
      'another bench-only scenario',
      [...base, '--scenarios', 'small-page,conditional-page'],
      { COLDTRACK_EMPLOYEE_JWT: jwt },
      /conditional-page is not run against a deployment/,
    ],
    ['an unknown scenario', [...base, '--scenarios', 'small-page,nope'], { COLDTRACK_EMPLOYEE_JWT: jwt }, /unknown scenario "nope"/],
    [
      'credentials in the URL',
      ['--base-url', 'https://sre:hunter2@staging.example'],
      { COLDTRACK_EMPLOYEE_JWT: jwt },
      /must not carry a user name or password/,
    ],
    ['a rate of 0', [...base, '--rate', '0'], { COLDTRACK_EMPLOYEE_JWT: jwt }, /--rate must be a whole number from 1 to 10000/],
  ];
  for (const [name, args, env, message] of refusals) {
    let error: unknown;
    try {
      readLoadtestOptions(args, env);
    } catch (caught) {
      error = caught;
    }
    t.ok(error instanceof UsageError, `${name}: refused`);
    const text = (error as Error).message;
    t.match(text, message, `${name}: ${text}`);
    t.notOk(
      text.includes('\n') || text.includes(jwt) || text.includes(token) || text.includes('hunter2'),
      `${name}: one line, no secret in it`,
    );
  }

  const options = readLoadtestOptions([...base, '--scenarios', 'management,small-page', '--rate', '250'], {
    COLDTRACK_EMPLOYEE_JWT: ` ${jwt}\n`,
  });
  t.ok(options !== 'help');
  if (options === 'help') return;
  t.equal(options.jwt, jwt, 'the JWT from the environment, trimmed');
  t.same(options.scenarioIds, ['small-page', 'management'], "the scenarios in the bench's order");
  t.equal(options.connections, 100, 'connections default to the rate, at most 100');
  const given = readLoadtestOptions([...base, '--tokens-file', file('given.txt', `${token}\n\n# spare\n`)], {});
  t.same(given !== 'help' && [given.givenTokens, given.jwt], [[token], null], 'a tokens file: its tokens as given, no JWT needed');
});
