// The plan of `npm run loadtest` (bench/loadtest.ts), made before anything is sent: its command
// line, checked (a UsageError names the first problem in one line and never repeats a secret: the
// employee JWT comes from a file or COLDTRACK_EMPLOYEE_JWT, API tokens from a file, never from an
// argument, which would stay in `ps` and the shell history); the tokens a rate needs; and the
// bench's scenarios (scenarios.ts, their requests from request-paths.ts) on the deployment's own
// units and dates instead of the bench's fixed data set.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { decodeJwt } from 'jose';
import { isWellFormedToken } from '../../src/tokens/format.js';
import { type Scope, SCOPES } from '../../src/tokens/scopes.js';
import { repoRoot } from './checkout.js';
import { TOKEN_LIMIT_PER_MINUTE } from './config.js';
import { daysBetween, type Deployment, type SensorHistory, shiftDay } from './loadtest-deployment.js';
import type { RequestSpec } from './load.js';
import { type MixedData, requestPaths, window } from './request-paths.js';
import { scenarios as benchScenarios } from './scenarios.js';

export const JWT_VARIABLE = 'COLDTRACK_EMPLOYEE_JWT';
export const WARMUP_SECONDS = 1;
/** What each token is planned to carry: its limit less room for the probes and uneven laps. */
export const PLANNED_PER_TOKEN_PER_MINUTE = 90;
/** 90 % of one employee's 600 reads a minute: the rest is left for the loadtest's own calls. */
export const MANAGEMENT_READS_PER_SECOND = 9;

/** Tokens that carry `rate` requests a second under PLANNED_PER_TOKEN_PER_MINUTE each. */
export const tokensForRate = (rate: number) => Math.ceil((rate * 60) / PLANNED_PER_TOKEN_PER_MINUTE);
/** The rate `count` tokens carry within their limit (the --tokens-file check). */
export const rateOfTokens = (count: number) => (count * TOKEN_LIMIT_PER_MINUTE) / 60;

// The scenarios: entry i of a token load goes out with token i mod T (lists a whole number of laps
// long, and the run deals them in one rotation across its loads), so each token carries rate / T
// requests a second; management reads with the employee's JWT, under its 600 reads a minute.

export interface LoadtestContext extends Pick<LoadtestOptions, 'jwt' | 'rate' | 'seconds' | 'connections'> {
  deployment: Deployment;
  /** raw API tokens, in memory only */
  tokens: string[];
  /** the base URL's path ('' or '/prefix'), before every request's path */
  pathPrefix: string;
}

export interface LoadtestLoad {
  label: string;
  /** requests a second */
  rate: number;
  connections: number;
  seconds: number;
  requests: RequestSpec[];
  /** 'tokens': entry i is sent with token i mod T, and the next load starts where this one stopped */
  credentials: 'tokens' | 'jwt';
}

export interface DeploymentScenario {
  /** the bench scenario's id, and its title unless the loadtest's differs */
  id: string;
  title: string;
  what: string;
  /** the data scopes its requests need: none, it reads with the employee's JWT; sensor_data alone, it needs a sensor history */
  scopes: readonly Scope[];
  /** why it cannot run here, or null */
  unavailable(context: LoadtestContext): string | null;
  /** its loads, run one after another */
  build(context: LoadtestContext): LoadtestLoad[];
}

/** The bench scenarios a deployment is not load-tested with, and why. */
export const NOT_AGAINST_A_DEPLOYMENT: Record<string, string> = {
  'heavy-rollups': "it samples the workers' event loops, which only the bench's own clusters expose to it",
};

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

/** Each path with the tokens in turn: a whole number of laps of T tokens, every path at least once. */
function tokenLoad(context: LoadtestContext, label: string, paths: string[], seconds = context.seconds): LoadtestLoad {
  const { tokens, rate, connections, pathPrefix } = context;
  const length = tokens.length * Math.ceil(Math.max(paths.length, tokens.length) / tokens.length);
  const requests = Array.from({ length }, (_, i): RequestSpec => {
    return { method: 'GET', path: pathPrefix + paths[i % paths.length]!, headers: bearer(tokens[i % tokens.length]!) };
  });
  return { label, rate, connections, seconds, requests, credentials: 'tokens' };
}

/** Units to filter by: the company's, else those with sensor readings (API tokens only). */
const knownUnits = ({ unitIds, sensor }: Deployment) => (unitIds.length > 0 ? unitIds : sensor.units.map((unit) => unit.id));
/** Pages of `perPage` records that `records` fill, at least 1 and at most `cap`. */
const pagesOf = (records: number, perPage: number, cap: number) => Math.min(cap, Math.max(1, Math.floor(records / perPage)));
/** The window of the sensor history's last `days` days (fewer when it is shorter). */
const lastDays = ({ firstDay, lastDay }: SensorHistory, days: number) => {
  const first = [firstDay, shiftDay(lastDay, -(days - 1))].sort().at(-1)!;
  return { days: daysBetween(first, lastDay), window: window(first, lastDay) };
};
/** The analytics window of the last `days` days to `today`. */
const daysTo = (today: string, days: number) => window(shiftDay(today, -(days - 1)), today);
/** Every unit over the last year of the sensor history, raw: page `page` of 1,000. */
const deepPage = (sensor: SensorHistory, page: number) => requestPaths.deepPage(lastDays(sensor, 366).window, page);

/** Pages 1.. of each unit with readings over the history's last `days` days, raw or hourly, as many as they fill (at most `cap`). */
function everySensorUnit({ sensor }: Deployment, kind: 'raw' | 'hourly', days: number, cap: number): string[] {
  const last = lastDays(sensor, days);
  return sensor.units.flatMap((unit) => {
    const records = (kind === 'raw' ? unit.readingsPerDay : 24 * unit.kinds) * last.days;
    return Array.from({ length: pagesOf(records, 1000, cap) }, (_, page) => requestPaths[`${kind}Page`](unit.id, last.window, page + 1));
  });
}

/** Request i of the bench's mixed partner traffic on the deployment's units and the last year's months. */
function mixedPath(i: number, deployment: Deployment): string {
  const { today, sensor } = deployment;
  const units = knownUnits(deployment);
  const monthStart = shiftDay(today, -30 * (1 + (i % 11)));
  const data: MixedData = {
    unit: units.length > 0 ? units[i % units.length] : undefined,
    month: window(monthStart, shiftDay(monthStart, 27)),
    quarter: daysTo(today, 91),
    year: daysTo(today, 366),
    sensorDay: sensor.available
      ? () => ({
          unitId: sensor.units[i % sensor.units.length]!.id,
          day: shiftDay(sensor.lastDay, -(i % Math.min(30, daysBetween(sensor.firstDay, sensor.lastDay)))),
        })
      : null,
  };
  return requestPaths.mixed(i, data);
}

/** A bench scenario against a deployment: the bench's title unless given, and whether it can run here from its scopes. */
function deploymentScenario(id: string, scenario: Omit<DeploymentScenario, 'id' | 'title' | 'unavailable'> & { title?: string }) {
  const unavailable = ({ jwt, deployment: { sensor } }: LoadtestContext) => {
    if (scenario.scopes.length === 0 && !jwt) return `not measured: it needs an employee JWT (--jwt-file or ${JWT_VARIABLE})`;
    return scenario.scopes.join() === 'sensor_data' && !sensor.available ? `not measured: ${sensor.reason}` : null;
  };
  const title = scenario.title ?? benchScenarios.find((bench) => bench.id === id)!.title;
  return { id, ...scenario, title, unavailable } satisfies DeploymentScenario;
}

export const DEPLOYMENT_SCENARIOS: readonly DeploymentScenario[] = [
  deploymentScenario('small-page', {
    what: 'GET /api/v1/analytics/revenue, page_size 10, the last 30 days, pages 1 to 3 a unit (at most 120): the cheapest real data request.',
    scopes: ['revenue'],
    build: (context) => {
      const pages = Math.min(120, Math.max(1, 3 * knownUnits(context.deployment).length));
      const thirtyDays = daysTo(context.deployment.today, 30);
      return [
        tokenLoad(
          context,
          'revenue page_size 10',
          Array.from({ length: pages }, (_, i) => requestPaths.revenuePage(thirtyDays, i + 1)),
        ),
      ];
    },
  }),
  deploymentScenario('sensor-raw', {
    what: 'GET /api/v1/sensor-data, raw readings of one unit over the last 30 days of its history, page_size 1000, the pages they fill (at most 5) of every unit with readings.',
    scopes: ['sensor_data'],
    build: (context) => [tokenLoad(context, 'raw page_size 1000', everySensorUnit(context.deployment, 'raw', 30, 5))],
  }),
  deploymentScenario('sensor-hourly', {
    what: 'GET /api/v1/sensor-data?aggregation=hourly, one unit over the last 365 days of its history, page_size 1000, the pages they fill (at most 17) of every unit with readings.',
    scopes: ['sensor_data'],
    build: (context) => [tokenLoad(context, 'hourly page_size 1000', everySensorUnit(context.deployment, 'hourly', 365, 17))],
  }),
  deploymentScenario('deep-walk', {
    title: 'Deep pagination: page 1 vs middle',
    what: 'GET /api/v1/sensor-data over every unit and the last year of the history, raw, page_size 1000: page 1, then the middle page of the walk; half the run each.',
    scopes: ['sensor_data'],
    build: (context) => {
      const { sensor } = context.deployment;
      const half = Math.max(1, Math.round(context.seconds / 2));
      return [1, Math.max(1, Math.ceil(sensor.deepPages / 2))].map((page) =>
        tokenLoad(context, `page ${page}`, [deepPage(sensor, page)], half),
      );
    },
  }),
  deploymentScenario('mixed', {
    what:
      'Every data endpoint at once, 200 distinct requests: utilization 45 %, users 15 %, revenue 15 %, impact 10 %, sensor-data 15 % ' +
      '(utilization when there is no sensor history); month, quarter and year windows ending today.',
    scopes: SCOPES,
    build: (context) => [
      tokenLoad(
        context,
        'mixed',
        Array.from({ length: 200 }, (_, i) => mixedPath(i, context.deployment)),
      ),
    ],
  }),
  deploymentScenario('large-pages', {
    what: 'page_size 1000 on every endpoint over the last 366 days: users, utilization, revenue, impact (and raw sensor-data when there is a history), pages spread over the units.',
    scopes: SCOPES,
    build: (context) => {
      const { today, sensor } = context.deployment;
      const pages = Math.max(1, Math.ceil((knownUnits(context.deployment).length * 366) / 1000));
      const year = daysTo(today, 366);
      const paths = Array.from({ length: 6 }, (_, lap) => [
        requestPaths.largePage('users', year, 1),
        ...(['utilization', 'revenue', 'impact'] as const).map((endpoint) =>
          requestPaths.largePage(endpoint, year, 1 + ((lap * 7) % pages)),
        ),
        ...(sensor.available ? [deepPage(sensor, 1 + ((lap * 7) % sensor.deepPages))] : []),
      ]).flat();
      return [tokenLoad(context, 'page_size 1000', paths)];
    },
  }),
  deploymentScenario('management', {
    title: 'Management: list tokens',
    what: `GET /api/v1/api-tokens?page_size=20 with the employee's JWT, at most ${MANAGEMENT_READS_PER_SECOND}/s (one employee may read 600 times a minute); no token is created.`,
    scopes: [],
    build: ({ rate, connections, seconds, pathPrefix, jwt }) => {
      const capped = Math.min(rate, MANAGEMENT_READS_PER_SECOND);
      const requests: RequestSpec[] = [{ method: 'GET', path: pathPrefix + requestPaths.tokenList, headers: bearer(jwt!) }];
      return [
        { label: 'list page_size 20', rate: capped, connections: Math.min(connections, capped), seconds, requests, credentials: 'jwt' },
      ];
    },
  }),
];

/** The data scopes the loadtest's tokens need for these scenarios. */
export const scopesFor = (selected: readonly DeploymentScenario[]): Scope[] =>
  SCOPES.filter((scope) => selected.some((scenario) => scenario.scopes.includes(scope)));

// The command line.

export const USAGE = `usage: ${JWT_VARIABLE}=... npm run loadtest -- --base-url URL [options]
       npm run loadtest -- --base-url URL --jwt-file PATH [options]
       npm run loadtest -- --base-url URL --tokens-file PATH [options]
  --base-url URL      the deployment, e.g. https://staging.coldtrack.example (required)
  --jwt-file PATH     a file holding a Registered Employee's JWT (else ${JWT_VARIABLE}): the
                      loadtest creates the API tokens it needs in that employee's company and
                      revokes them at the end
  --tokens-file PATH  API tokens, one a line, used as given (none created or revoked)
  --rate N            requests a second across all tokens, each scenario (default 50)
  --duration S        seconds measured per scenario (default 30), after a ${WARMUP_SECONDS}-second warm-up
  --scenarios a,b     a subset of: ${DEPLOYMENT_SCENARIOS.map((scenario) => scenario.id).join(', ')} (default all)
  --connections N     concurrent connections (default: the rate, at most 100)
  --out DIR           the report's folder (default bench/results)
  --yes               do not ask before creating tokens (required without a terminal)
Neither the JWT nor a token is ever taken from the command line. Ctrl-C, or SIGTERM or SIGINT to
npm's process (a supervisor, a CI timeout), stops the load and revokes the tokens created.`;

export class UsageError extends Error {}

/** The checked command line: readLoadtestOptions' answer but for --help. */
export type LoadtestOptions = Exclude<ReturnType<typeof readLoadtestOptions>, 'help'>;

/** Something that looks like a credential: a JWT or an API token. */
const looksSecret = (text: string) => /eyJ[\w-]{8,}\.[\w-]+/.test(text) || /ctk_[0-9A-Za-z]{8,}/.test(text);

function wholeNumber(name: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max)
    throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
  return Number(text);
}

function readSecretFile(option: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the ${option} file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The JWT, its shape and expiry checked (not its signature: the deployment does that). */
function checkedJwt(jwt: string, from: string, now: Date): { jwt: string; expiresAt: Date | null } {
  if (!/^[\w-]+\.[\w-]+\.[\w-]*$/.test(jwt)) throw new UsageError(`${from} does not hold a JWT (three base64url parts separated by dots)`);
  let expiresAt: number | undefined;
  try {
    expiresAt = decodeJwt(jwt).exp;
  } catch {
    throw new UsageError(`${from} does not hold a readable JWT`);
  }
  if (expiresAt !== undefined && expiresAt * 1000 <= now.getTime()) {
    throw new UsageError(`the JWT in ${from} expired at ${new Date(expiresAt * 1000).toISOString()}: sign in again`);
  }
  return { jwt, expiresAt: expiresAt === undefined ? null : new Date(expiresAt * 1000) };
}

function tokensFrom(path: string): string[] {
  const tokens = readSecretFile('--tokens-file', path)
    .split('\n')
    .map((line, index) => {
      const token = line.trim();
      if (token !== '' && !token.startsWith('#') && !isWellFormedToken(token))
        throw new UsageError(`line ${index + 1} of the --tokens-file is not an API token (ctk_...)`);
      return token;
    })
    .filter((token) => token !== '' && !token.startsWith('#'));
  if (tokens.length === 0) throw new UsageError('the --tokens-file holds no API token');
  return tokens;
}

/** The scenarios named, in the bench's order whatever the order asked. */
function scenarioIdsOf(text: string | undefined): string[] {
  const known = DEPLOYMENT_SCENARIOS.map((scenario) => scenario.id);
  const ids = text === undefined ? known : [...new Set(text.split(',').map((id) => id.trim()))].filter(Boolean);
  if (ids.length === 0) throw new UsageError(`--scenarios names none of: ${known.join(', ')}`);
  for (const id of ids) {
    const why = NOT_AGAINST_A_DEPLOYMENT[id];
    if (why) throw new UsageError(`--scenarios: ${id} is not run against a deployment (${why})`);
    if (!known.includes(id)) throw new UsageError(`--scenarios: unknown scenario ${JSON.stringify(id)}; known: ${known.join(', ')}`);
  }
  return known.filter((id) => ids.includes(id));
}

/** The arguments and the environment, checked; 'help' for --help. */
export function readLoadtestOptions(argv: string[], env: NodeJS.ProcessEnv, now = new Date()) {
  if (argv.some((argument) => /^--?(jwt|token|tokens|api-token|employee-jwt)(=|$)/.test(argument))) {
    throw new UsageError(
      `the JWT and tokens are never taken as arguments (they would stay in ps and the shell history): use --jwt-file PATH, ${JWT_VARIABLE} or --tokens-file PATH`,
    );
  }
  if (argv.some(looksSecret)) {
    throw new UsageError(
      `an argument looks like a JWT or an API token: pass it in a file (--jwt-file, --tokens-file) or ${JWT_VARIABLE}, never on the command line`,
    );
  }
  const text = { type: 'string' } as const;
  const options = {
    'base-url': text,
    'jwt-file': text,
    'tokens-file': text,
    rate: text,
    duration: text,
    scenarios: text,
    connections: text,
    out: text,
    yes: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  } as const;
  let parsed;
  try {
    parsed = parseArgs({ args: argv, strict: true, allowPositionals: true, options });
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help' as const;
  // not repeated: it may be a secret in the wrong place
  if (positionals.length > 0) throw new UsageError(`${positionals.length} unexpected argument(s) without an option name (see --help)`);
  if (!values['base-url'])
    throw new UsageError('--base-url URL is required: the deployment to load-test, e.g. https://staging.coldtrack.example');
  const baseUrl = URL.parse(values['base-url']);
  if (baseUrl?.protocol !== 'http:' && baseUrl?.protocol !== 'https:')
    throw new UsageError('--base-url must be an http:// or https:// URL');
  if (baseUrl.username || baseUrl.password) throw new UsageError('--base-url must not carry a user name or password');
  if (baseUrl.search || baseUrl.hash) throw new UsageError('--base-url must not carry a query or a fragment');

  const jwtFile = values['jwt-file'];
  const employee =
    jwtFile !== undefined
      ? checkedJwt(readSecretFile('--jwt-file', jwtFile).trim(), 'the --jwt-file', now)
      : env[JWT_VARIABLE]
        ? checkedJwt(env[JWT_VARIABLE].trim(), JWT_VARIABLE, now)
        : null;
  const givenTokens = values['tokens-file'] !== undefined ? tokensFrom(values['tokens-file']) : null;
  if (!employee && !givenTokens) {
    throw new UsageError(
      `an employee JWT is needed to create the tokens: --jwt-file PATH or ${JWT_VARIABLE} (or --tokens-file PATH with API tokens to use as given)`,
    );
  }
  const rate = wholeNumber('rate', values.rate, 50, 10_000);
  return {
    baseUrl,
    /** the employee's JWT (token management, unit discovery, the management scenario), and when it expires; null: none given, none said */
    jwt: employee?.jwt ?? null,
    jwtExpiresAt: employee?.expiresAt ?? null,
    /** API tokens from --tokens-file, used as given; null: the loadtest creates its own */
    givenTokens,
    /** requests a second across all tokens, and measured seconds, each scenario */
    rate,
    seconds: wholeNumber('duration', values.duration, 30, 3600),
    /** in the bench's order */
    scenarioIds: scenarioIdsOf(values.scenarios),
    connections: wholeNumber('connections', values.connections, Math.min(rate, 100), 1000),
    outDir: values.out !== undefined ? resolve(values.out) : join(repoRoot, 'bench/results'),
    yes: values.yes,
  };
}
