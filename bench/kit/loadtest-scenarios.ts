// The bench's request scenarios as `npm run loadtest` runs them against a deployment: first what
// they need to know of it, asked of its API rather than a database (the employee's company and live
// units, where its sensor history lies), then the scenarios on its own units and dates.
import { ColdtrackApiError, ColdtrackClient, RateBudget } from '@coldtrack/client';
import { formatDay, MAX_SENSOR_WINDOW_DAYS, parseDay } from '../../src/data-surface/window.js';
import { DAY_MS } from '../../src/time.js';
import type { Scope } from '../../src/tokens/scopes.js';
import type { RequestSpec } from './load.js';
import { type MixedData, requestPaths, window } from './request-paths.js';
import { scenarios as benchScenarios } from './scenarios.js';

/** `day` moved by `days` (negative: earlier), both YYYY-MM-DD, UTC. */
export const shiftDay = (day: string, days: number) => formatDay(parseDay(day) + days * DAY_MS);
export const daysBetween = (first: string, last: string) => (parseDay(last) - parseDay(first)) / DAY_MS + 1;

export interface SensorHistory {
  available: boolean;
  /** why not, when not available */
  reason: string;
  /** first and last day with readings in the last ten years (daily aggregates' longest window) */
  firstDay: string;
  lastDay: string;
  /** units with readings on the last full day: their readings that day, and of how many kinds (1 or 2) */
  units: { id: number; readingsPerDay: number; kinds: number }[];
  /** pages of 1,000 raw readings over every unit and the last year of the history */
  deepPages: number;
}

export interface Deployment {
  /** the UTC day the run started: analytics windows end on it */
  today: string;
  /** the JWT's company; null with API tokens only */
  companyId: number | null;
  /** the company's live units; empty when no JWT was given */
  unitIds: number[];
  sensor: SensorHistory;
}

export const NO_SENSOR_HISTORY: SensorHistory = {
  available: false,
  reason: 'not probed',
  firstDay: '',
  lastDay: '',
  units: [],
  deepPages: 0,
};

/** Fresh budgets: the loadtest's own calls never wait for a budget another client in the process spent. */
const clientFor = (baseUrl: URL, token: string) =>
  new ColdtrackClient({ baseUrl: baseUrl.href, token, budget: new RateBudget(), retries: 2 });

/** The employee's company and every live unit of it (pages of 1,000). */
export async function discoverUnits(baseUrl: URL, jwt: string): Promise<{ companyId: number; unitIds: number[] }> {
  const client = clientFor(baseUrl, jwt);
  const unitIds: number[] = [];
  for (let page = 1; ; page++) {
    const body = await client.coolingUnits.list({ page, page_size: 1000 });
    unitIds.push(...body.data.map((unit) => unit.id));
    if (!body.meta.pagination.has_next || body.data.length === 0) return { companyId: body.meta.company_id, unitIds };
  }
}

const notAvailable = (reason: string): SensorHistory => ({ ...NO_SENSOR_HISTORY, reason });

/**
 * Where the sensor history lies, in four or five requests with one token that may read
 * sensor-data: the oldest and newest daily record of the last ten years, the daily records of the
 * last full day (which units, how many readings; the last day itself when the one before has
 * none), and the raw page count of the last year.
 */
export async function probeSensorHistory(baseUrl: URL, token: string, today: string): Promise<SensorHistory> {
  const client = clientFor(baseUrl, token);
  const daily = { aggregation: 'daily', start_date: shiftDay(today, -(MAX_SENSOR_WINDOW_DAYS.daily - 1)), end_date: today } as const;
  try {
    const oldest = await client.sensorData({ ...daily, page_size: 1, page: 1 });
    const total = oldest.meta.pagination.total_count;
    if (total === 0 || !oldest.data[0]) return notAvailable(`no sensor readings between ${daily.start_date} and ${today}`);
    const newest = await client.sensorData({ ...daily, page_size: 1, page: total });
    const firstDay = oldest.data[0].timestamp.slice(0, 10);
    const lastDay = newest.data[0]?.timestamp.slice(0, 10) ?? firstDay;
    // the last day may still be filling: the one before it is whole, when it has readings
    let day = await client.sensorData({
      aggregation: 'daily',
      start_date: shiftDay(lastDay, -1),
      end_date: shiftDay(lastDay, -1),
      page_size: 1000,
    });
    if (day.data.length === 0)
      day = await client.sensorData({ aggregation: 'daily', start_date: lastDay, end_date: lastDay, page_size: 1000 });
    const perUnit = new Map<number, { id: number; readingsPerDay: number; kinds: number }>();
    for (const record of day.data) {
      const unit = perUnit.get(record.cooling_unit_id) ?? { id: record.cooling_unit_id, readingsPerDay: 0, kinds: 0 };
      perUnit.set(unit.id, { id: unit.id, readingsPerDay: unit.readingsPerDay + record.sample_count, kinds: unit.kinds + 1 });
    }
    const deepFirst = [firstDay, shiftDay(lastDay, -(MAX_SENSOR_WINDOW_DAYS.raw - 1))].sort().at(-1)!;
    const deep = await client.sensorData({ start_date: deepFirst, end_date: lastDay, page_size: 1000, page: 1 });
    return {
      available: true,
      reason: '',
      firstDay,
      lastDay,
      units: [...perUnit.values()].sort((a, b) => a.id - b.id),
      deepPages: Math.max(1, deep.meta.pagination.total_pages),
    };
  } catch (error) {
    if (error instanceof ColdtrackApiError) return notAvailable(`GET /api/v1/sensor-data answered ${error.status} (${error.code})`);
    throw error;
  }
}

// The scenarios: the bench's requests (request-paths.ts) on the deployment's own units and dates
// instead of the bench's fixed data set, each at the rate asked. Every data request goes out with
// the loadtest's tokens in turn (entry i of a list with token i mod T, lists a whole number of laps
// long), so each token carries rate / T requests a second; management reads with the employee's
// JWT, held under that employee's 600 reads a minute.

/** The bench scenarios a deployment is not load-tested with, and why. */
export const NOT_AGAINST_A_DEPLOYMENT: Record<string, string> = {
  'heavy-rollups': "it samples the workers' event loops, which only the bench's own clusters expose to it",
};

/** 90 % of one employee's 600 reads a minute: the rest is left for the loadtest's own calls. */
export const MANAGEMENT_READS_PER_SECOND = 9;

export interface LoadtestContext {
  deployment: Deployment;
  /** raw API tokens, in memory only */
  tokens: string[];
  jwt: string | null;
  rate: number;
  seconds: number;
  connections: number;
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
  id: string;
  title: string;
  what: string;
  /** the data scopes its requests need (none: the employee's JWT) */
  scopes: readonly Scope[];
  /** reads sensor-data (every request, or some when the history is there) */
  readsSensor: 'always' | 'when-available' | 'never';
  /** why it cannot run here, or null */
  unavailable(context: LoadtestContext): string | null;
  /** its loads, run one after another */
  build(context: LoadtestContext): LoadtestLoad[];
}

const benchTitle = (id: string) => benchScenarios.find((scenario) => scenario.id === id)!.title;
/** the last 366 days, the longest analytics window */
const yearTo = (today: string) => window(shiftDay(today, -365), today);
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

/** Each path with the tokens in turn: a whole number of laps of T tokens, every path at least once. */
function overTokens(context: LoadtestContext, paths: string[]): RequestSpec[] {
  const count = context.tokens.length;
  const length = count * Math.ceil(Math.max(paths.length, count) / count);
  return Array.from({ length }, (_, i) => ({
    method: 'GET',
    path: context.pathPrefix + paths[i % paths.length]!,
    headers: bearer(context.tokens[i % count]!),
  }));
}

function tokenLoad(context: LoadtestContext, label: string, paths: string[], seconds = context.seconds): LoadtestLoad {
  return {
    label,
    rate: context.rate,
    connections: context.connections,
    seconds,
    requests: overTokens(context, paths),
    credentials: 'tokens',
  };
}

const noSensor = ({ deployment }: LoadtestContext) => (deployment.sensor.available ? null : `not measured: ${deployment.sensor.reason}`);
/** Units to filter by: the company's, else those with sensor readings (API tokens only). */
const knownUnits = ({ deployment }: LoadtestContext) =>
  deployment.unitIds.length > 0 ? deployment.unitIds : deployment.sensor.units.map((unit) => unit.id);
/** Pages of `perPage` records that `records` fill, at least 1 and at most `cap`. */
const pagesOf = (records: number, perPage: number, cap: number) => Math.min(cap, Math.max(1, Math.floor(records / perPage)));

/** The first of the sensor history's last `days` days (a later one when it is shorter). */
const firstOfLast = (sensor: SensorHistory, days: number) => [sensor.firstDay, shiftDay(sensor.lastDay, -(days - 1))].sort().at(-1)!;

const sensorPaths = {
  /** the last 30 days of one unit, raw, 1,000 a page */
  rawPages(sensor: SensorHistory): string[] {
    const first = firstOfLast(sensor, 30);
    return sensor.units.flatMap((unit) =>
      Array.from({ length: pagesOf(unit.readingsPerDay * daysBetween(first, sensor.lastDay), 1000, 5) }, (_, page) =>
        requestPaths.rawPage(unit.id, window(first, sensor.lastDay), page + 1),
      ),
    );
  },
  /** the last 365 days of one unit, hourly, 1,000 a page */
  hourlyPages(sensor: SensorHistory): string[] {
    const first = firstOfLast(sensor, 365);
    return sensor.units.flatMap((unit) =>
      Array.from({ length: pagesOf(24 * unit.kinds * daysBetween(first, sensor.lastDay), 1000, 17) }, (_, page) =>
        requestPaths.hourlyPage(unit.id, window(first, sensor.lastDay), page + 1),
      ),
    );
  },
  /** every unit over the last year of the history, raw */
  deepPage: (sensor: SensorHistory, page: number) => requestPaths.deepPage(window(firstOfLast(sensor, 366), sensor.lastDay), page),
};

/** The bench's mixed partner traffic on the deployment's units and the last year's months. */
function mixedPath(i: number, context: LoadtestContext): string {
  const { today, sensor } = context.deployment;
  const units = knownUnits(context);
  const monthStart = shiftDay(today, -30 * (1 + (i % 11)));
  const data: MixedData = {
    unit: units.length > 0 ? units[i % units.length] : undefined,
    month: window(monthStart, shiftDay(monthStart, 27)),
    quarter: window(shiftDay(today, -90), today),
    year: yearTo(today),
    sensorDay: sensor.available
      ? () => ({
          unitId: sensor.units[i % sensor.units.length]!.id,
          day: shiftDay(sensor.lastDay, -(i % Math.min(30, daysBetween(sensor.firstDay, sensor.lastDay)))),
        })
      : null,
  };
  return requestPaths.mixed(i, data);
}

const ALL_DATA: readonly Scope[] = ['users', 'utilization', 'revenue', 'impact', 'sensor_data'];

export const DEPLOYMENT_SCENARIOS: readonly DeploymentScenario[] = [
  {
    id: 'small-page',
    title: benchTitle('small-page'),
    what: 'GET /api/v1/analytics/revenue, page_size 10, the last 30 days, pages 1 to 3 a unit (at most 120): the cheapest real data request.',
    scopes: ['revenue'],
    readsSensor: 'never',
    unavailable: () => null,
    build: (context) => {
      const { today } = context.deployment;
      const pages = Math.min(120, Math.max(1, 3 * knownUnits(context).length));
      const paths = Array.from({ length: pages }, (_, i) => requestPaths.revenuePage(window(shiftDay(today, -29), today), i + 1));
      return [tokenLoad(context, 'revenue page_size 10', paths)];
    },
  },
  {
    id: 'sensor-raw',
    title: benchTitle('sensor-raw'),
    what: 'GET /api/v1/sensor-data, raw readings of one unit over the last 30 days of its history, page_size 1000, the pages they fill (at most 5) of every unit with readings.',
    scopes: ['sensor_data'],
    readsSensor: 'always',
    unavailable: noSensor,
    build: (context) => [tokenLoad(context, 'raw page_size 1000', sensorPaths.rawPages(context.deployment.sensor))],
  },
  {
    id: 'sensor-hourly',
    title: benchTitle('sensor-hourly'),
    what: 'GET /api/v1/sensor-data?aggregation=hourly, one unit over the last 365 days of its history, page_size 1000, the pages they fill (at most 17) of every unit with readings.',
    scopes: ['sensor_data'],
    readsSensor: 'always',
    unavailable: noSensor,
    build: (context) => [tokenLoad(context, 'hourly page_size 1000', sensorPaths.hourlyPages(context.deployment.sensor))],
  },
  {
    id: 'deep-walk',
    title: 'Deep pagination: page 1 vs middle',
    what: 'GET /api/v1/sensor-data over every unit and the last year of the history, raw, page_size 1000: page 1, then the middle page of the walk; half the run each.',
    scopes: ['sensor_data'],
    readsSensor: 'always',
    unavailable: noSensor,
    build: (context) => {
      const { sensor } = context.deployment;
      const half = Math.max(1, Math.round(context.seconds / 2));
      return [1, Math.max(1, Math.ceil(sensor.deepPages / 2))].map((page) =>
        tokenLoad(context, `page ${page}`, [sensorPaths.deepPage(sensor, page)], half),
      );
    },
  },
  {
    id: 'mixed',
    title: benchTitle('mixed'),
    what:
      'Every data endpoint at once, 200 distinct requests: utilization 45 %, users 15 %, revenue 15 %, impact 10 %, sensor-data 15 % ' +
      '(utilization when there is no sensor history); month, quarter and year windows ending today.',
    scopes: ALL_DATA,
    readsSensor: 'when-available',
    unavailable: () => null,
    build: (context) => [
      tokenLoad(
        context,
        'mixed',
        Array.from({ length: 200 }, (_, i) => mixedPath(i, context)),
      ),
    ],
  },
  {
    id: 'large-pages',
    title: benchTitle('large-pages'),
    what: 'page_size 1000 on every endpoint over the last 366 days: users, utilization, revenue, impact (and raw sensor-data when there is a history), pages spread over the units.',
    scopes: ALL_DATA,
    readsSensor: 'when-available',
    unavailable: () => null,
    build: (context) => {
      const { today, sensor } = context.deployment;
      const pages = Math.max(1, Math.ceil((knownUnits(context).length * 366) / 1000));
      const year = yearTo(today);
      const paths = Array.from({ length: 6 }, (_, lap) => [
        requestPaths.largePage('users', year, 1),
        ...(['utilization', 'revenue', 'impact'] as const).map((endpoint) =>
          requestPaths.largePage(endpoint, year, 1 + ((lap * 7) % pages)),
        ),
        ...(sensor.available ? [sensorPaths.deepPage(sensor, 1 + ((lap * 7) % sensor.deepPages))] : []),
      ]).flat();
      return [tokenLoad(context, 'page_size 1000', paths)];
    },
  },
  {
    id: 'management',
    title: 'Management: list tokens',
    what: `GET /api/v1/api-tokens?page_size=20 with the employee's JWT, at most ${MANAGEMENT_READS_PER_SECOND}/s (one employee may read 600 times a minute); no token is created.`,
    scopes: [],
    readsSensor: 'never',
    unavailable: ({ jwt }) => (jwt ? null : 'not measured: it needs an employee JWT (--jwt-file or COLDTRACK_EMPLOYEE_JWT)'),
    build: (context) => {
      const rate = Math.min(context.rate, MANAGEMENT_READS_PER_SECOND);
      const request: RequestSpec = {
        method: 'GET',
        path: context.pathPrefix + requestPaths.tokenList,
        headers: bearer(context.jwt!),
      };
      return [
        {
          label: 'list page_size 20',
          rate,
          connections: Math.min(context.connections, rate),
          seconds: context.seconds,
          requests: [request],
          credentials: 'jwt',
        },
      ];
    },
  },
];

export const scenarioById = (id: string) => DEPLOYMENT_SCENARIOS.find((scenario) => scenario.id === id)!;

/** The data scopes the loadtest's tokens need for these scenarios. */
export function scopesFor(selected: readonly DeploymentScenario[]): Scope[] {
  return ALL_DATA.filter((scope) => selected.some((scenario) => scenario.scopes.includes(scope)));
}
