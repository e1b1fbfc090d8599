// The plan of `npm run loadtest`, made before anything is sent: its command line (secrets from a file
// or the environment only), the tokens a rate needs, the bench's requests on the deployment's data.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { decodeJwt } from 'jose';
import { isWellFormedToken } from '../../src/tokens/format.js';
import { type Scope, SCOPES } from '../../src/tokens/scopes.js';
import { repoRoot } from './checkout.js';
import { daysBetween, type Deployment, type SensorHistory, shiftDay } from './loadtest-deployment.js';
import type { RequestSpec } from './load.js';
import { requestPaths, window } from './request-paths.js';
import { scenarios as benchScenarios } from './scenarios.js';

export const JWT_VARIABLE = 'COLDTRACK_EMPLOYEE_JWT';
export const WARMUP_SECONDS = 1;
/** What each token is planned to carry: its limit less room for the probes and uneven laps. */
export const PLANNED_PER_TOKEN_PER_MINUTE = 90;
/** 90 % of one employee's 600 reads a minute: the rest is left for the loadtest's own calls. */
export const MANAGEMENT_READS_PER_SECOND = 9;
export const tokensForRate = (rate: number) => Math.ceil((rate * 60) / PLANNED_PER_TOKEN_PER_MINUTE);

export interface LoadtestContext extends Pick<LoadtestOptions, 'jwt' | 'rate' | 'seconds' | 'connections'> {
  deployment: Deployment;
  /** raw API tokens, in memory only */
  tokens: string[];
  /** the base URL's path ('' or '/prefix'), before every request's path */
  pathPrefix: string;
}

export interface LoadtestLoad {
  label: string;
  rate: number;
  connections: number;
  seconds: number;
  requests: RequestSpec[];
  /** 'tokens': entry i goes with token i mod T, and the next load deals on from where this one stopped */
  credentials: 'tokens' | 'jwt';
}

export interface DeploymentScenario {
  /** the bench scenario's id and title */
  id: string;
  title: string;
  /** its tokens' scopes; none: it reads with the employee's JWT; sensor_data alone: it needs a sensor history */
  scopes: readonly Scope[];
  /** why it cannot run here, or null */
  unavailable(context: LoadtestContext): string | null;
  build(context: LoadtestContext): LoadtestLoad[];
}

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

/** Each path with the tokens in turn, so every token carries rate / T: whole laps of T, every path at least once. */
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
    const pages = Math.min(cap, Math.max(1, Math.floor(records / 1000)));
    return Array.from({ length: pages }, (_, page) => requestPaths[`${kind}Page`](unit.id, last.window, page + 1));
  });
}

/** Request i of the bench's mixed partner traffic on the deployment's units and the last year's months. */
function mixedPath(i: number, deployment: Deployment): string {
  const { today, sensor } = deployment;
  const units = knownUnits(deployment);
  const monthStart = shiftDay(today, -30 * (1 + (i % 11)));
  return requestPaths.mixed(i, {
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
  });
}

/** The bench's titles, but where the loadtest sends less than the bench scenario. */
const TITLES: Record<string, string> = { 'deep-walk': 'Deep pagination: page 1 vs middle', management: 'Management: list tokens' };

/** Bench scenario `id` on a deployment, and whether it can run here from its scopes. */
function deploymentScenario(id: string, scopes: readonly Scope[], build: DeploymentScenario['build']): DeploymentScenario {
  const unavailable = ({ jwt, deployment: { sensor } }: LoadtestContext) => {
    if (scopes.length === 0 && !jwt) return `not measured: it needs an employee JWT (--jwt-file or ${JWT_VARIABLE})`;
    return scopes.join() === 'sensor_data' && !sensor.available ? `not measured: ${sensor.reason}` : null;
  };
  return { id, title: TITLES[id] ?? benchScenarios.find((bench) => bench.id === id)!.title, scopes, unavailable, build };
}

// Analytics windows end today, sensor windows on the history's last day; page counts follow the deployment's data.
export const DEPLOYMENT_SCENARIOS: readonly DeploymentScenario[] = [
  deploymentScenario('small-page', ['revenue'], (context) => {
    const month = daysTo(context.deployment.today, 30);
    const pages = Math.min(120, Math.max(1, 3 * knownUnits(context.deployment).length));
    const paths = Array.from({ length: pages }, (_, i) => requestPaths.revenuePage(month, i + 1));
    return [tokenLoad(context, 'revenue page_size 10', paths)];
  }),
  deploymentScenario('sensor-raw', ['sensor_data'], (context) => [
    tokenLoad(context, 'raw page_size 1000', everySensorUnit(context.deployment, 'raw', 30, 5)),
  ]),
  deploymentScenario('sensor-hourly', ['sensor_data'], (context) => [
    tokenLoad(context, 'hourly page_size 1000', everySensorUnit(context.deployment, 'hourly', 365, 17)),
  ]),
  deploymentScenario('deep-walk', ['sensor_data'], (context) => {
    const { sensor } = context.deployment;
    const half = Math.max(1, Math.round(context.seconds / 2));
    const middle = Math.max(1, Math.ceil(sensor.deepPages / 2));
    return [1, middle].map((page) => tokenLoad(context, `page ${page}`, [deepPage(sensor, page)], half));
  }),
  deploymentScenario('mixed', SCOPES, (context) => {
    const paths = Array.from({ length: 200 }, (_, i) => mixedPath(i, context.deployment));
    return [tokenLoad(context, 'mixed', paths)];
  }),
  deploymentScenario('large-pages', SCOPES, (context) => {
    const { today, sensor } = context.deployment;
    const pages = Math.max(1, Math.ceil((knownUnits(context.deployment).length * 366) / 1000));
    const year = daysTo(today, 366);
    const paths = Array.from({ length: 6 }, (_, lap) => [
      requestPaths.largePage('users', year, 1),
      ...(['utilization', 'revenue', 'impact'] as const).map((endpoint) => requestPaths.largePage(endpoint, year, 1 + ((lap * 7) % pages))),
      ...(sensor.available ? [deepPage(sensor, 1 + ((lap * 7) % sensor.deepPages))] : []),
    ]).flat();
    return [tokenLoad(context, 'page_size 1000', paths)];
  }),
  deploymentScenario('management', [], ({ rate, connections, seconds, pathPrefix, jwt }) => {
    const capped = Math.min(rate, MANAGEMENT_READS_PER_SECOND);
    const requests: RequestSpec[] = [{ method: 'GET', path: pathPrefix + requestPaths.tokenList, headers: bearer(jwt!) }];
    return [
      { label: 'list page_size 20', rate: capped, connections: Math.min(connections, capped), seconds, requests, credentials: 'jwt' },
    ];
  }),
];

/** The data scopes the loadtest's tokens need for these scenarios. */
export const scopesFor = (selected: readonly DeploymentScenario[]): Scope[] =>
  SCOPES.filter((scope) => selected.some((scenario) => scenario.scopes.includes(scope)));

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

/** A bad command line, said in one line that never repeats a secret. */
export class UsageError extends Error {}

export type LoadtestOptions = Exclude<ReturnType<typeof readLoadtestOptions>, 'help'>;

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

/** The JWT, its shape and expiry checked (its signature is the deployment's to check). */
function checkedJwt(jwt: string, from: string, now: Date): { jwt: string; expiresAt: Date | null } {
  if (!/^[\w-]+\.[\w-]+\.[\w-]*$/.test(jwt)) throw new UsageError(`${from} does not hold a JWT (three base64url parts separated by dots)`);
  let exp: number | undefined;
  try {
    exp = decodeJwt(jwt).exp;
  } catch {
    throw new UsageError(`${from} does not hold a readable JWT`);
  }
  const expiresAt = exp === undefined ? null : new Date(exp * 1000);
  if (expiresAt && expiresAt <= now) throw new UsageError(`the JWT in ${from} expired at ${expiresAt.toISOString()}: sign in again`);
  return { jwt, expiresAt };
}

function tokensFrom(path: string): string[] {
  const lines = readSecretFile('--tokens-file', path).split('\n');
  const bad = lines.findIndex((line) => line.trim() !== '' && !line.trim().startsWith('#') && !isWellFormedToken(line.trim()));
  if (bad >= 0) throw new UsageError(`line ${bad + 1} of the --tokens-file is not an API token (ctk_...)`);
  const tokens = lines.map((line) => line.trim()).filter((token) => token !== '' && !token.startsWith('#'));
  if (tokens.length === 0) throw new UsageError('the --tokens-file holds no API token');
  return tokens;
}

/** The scenarios named, in the loadtest's order whatever the order asked. */
function scenarioIdsOf(text: string | undefined): string[] {
  const known = DEPLOYMENT_SCENARIOS.map((scenario) => scenario.id);
  const ids = text === undefined ? known : [...new Set(text.split(',').map((id) => id.trim()))].filter(Boolean);
  if (ids.length === 0) throw new UsageError(`--scenarios names none of: ${known.join(', ')}`);
  for (const id of ids.filter((id) => !known.includes(id))) {
    if (benchScenarios.some((bench) => bench.id === id))
      throw new UsageError(`--scenarios: ${id} is not run against a deployment (it reads what only the bench's own clusters expose)`);
    throw new UsageError(`--scenarios: unknown scenario ${JSON.stringify(id)}; known: ${known.join(', ')}`);
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
  if (argv.some((argument) => /eyJ[\w-]{8,}\.[\w-]+/.test(argument) || /ctk_[0-9A-Za-z]{8,}/.test(argument))) {
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
    /** the employee's JWT and when it expires; null: none given */
    jwt: employee?.jwt ?? null,
    jwtExpiresAt: employee?.expiresAt ?? null,
    /** API tokens from --tokens-file, used as given; null: the loadtest creates its own */
    givenTokens,
    rate,
    seconds: wholeNumber('duration', values.duration, 30, 3600),
    scenarioIds: scenarioIdsOf(values.scenarios),
    connections: wholeNumber('connections', values.connections, Math.min(rate, 100), 1000),
    outDir: values.out !== undefined ? resolve(values.out) : join(repoRoot, 'bench/results'),
    yes: values.yes,
  };
}
