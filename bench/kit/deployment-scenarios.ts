// The bench's request scenarios (scenarios.ts) as the loadtest runs them against a deployment: the
// same endpoints, page sizes and request shapes, on the deployment's own units and dates
// (deployment-discovery.ts) instead of the bench's fixed data set, each at the rate asked. Every
// data request goes out with the loadtest's tokens in turn (entry i of a list with token i mod T,
// lists a whole number of laps long), so each token carries rate / T requests a second.
// management reads with the employee's JWT, held under that employee's 600 reads a minute.
import type { Scope } from '../../src/tokens/scopes.js';
import { daysBetween, type Deployment, shiftDay } from './deployment-discovery.js';
import type { RequestSpec } from './load.js';
import { scenarios as benchScenarios } from './scenarios.js';

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

const KINDS = 'specification_type=TEMPERATURE,HUMIDITY';
const benchTitle = (id: string) => benchScenarios.find((scenario) => scenario.id === id)!.title;
const window = (first: string, last: string) => `start_date=${first}&end_date=${last}`;
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

const sensorPaths = {
  /** the last 30 days of one unit, raw, 1,000 a page */
  rawPages(sensor: Deployment['sensor']): string[] {
    const first = [sensor.firstDay, shiftDay(sensor.lastDay, -29)].sort().at(-1)!;
    return sensor.units.flatMap((unit) =>
      Array.from(
        { length: pagesOf(unit.readingsPerDay * daysBetween(first, sensor.lastDay), 1000, 5) },
        (_, page) =>
          `/api/v1/sensor-data?cooling_unit_id=${unit.id}&${window(first, sensor.lastDay)}&${KINDS}&page_size=1000&page=${page + 1}`,
      ),
    );
  },
  /** the last 365 days of one unit, hourly, 1,000 a page */
  hourlyPages(sensor: Deployment['sensor']): string[] {
    const first = [sensor.firstDay, shiftDay(sensor.lastDay, -364)].sort().at(-1)!;
    return sensor.units.flatMap((unit) =>
      Array.from(
        { length: pagesOf(24 * unit.kinds * daysBetween(first, sensor.lastDay), 1000, 17) },
        (_, page) =>
          `/api/v1/sensor-data?cooling_unit_id=${unit.id}&${window(first, sensor.lastDay)}&aggregation=hourly&${KINDS}&page_size=1000&page=${page + 1}`,
      ),
    );
  },
  /** every unit over the last year of the history, raw */
  deepPage(sensor: Deployment['sensor'], page: number): string {
    const first = [sensor.firstDay, shiftDay(sensor.lastDay, -365)].sort().at(-1)!;
    return `/api/v1/sensor-data?${window(first, sensor.lastDay)}&${KINDS}&page_size=1000&page=${page}`;
  },
};

/** The bench's mixed partner traffic on the deployment's units and the last year's months. */
function mixedPath(i: number, context: LoadtestContext): string {
  const { today, sensor } = context.deployment;
  const units = knownUnits(context);
  const unit = units.length > 0 ? units[i % units.length] : undefined;
  const monthStart = shiftDay(today, -30 * (1 + (i % 11)));
  const kind = i % 20;
  if (kind < 9 || (kind >= 17 && !sensor.available)) {
    const filter = unit !== undefined && i % 3 === 0 ? `&cooling_unit_id=${unit}` : '';
    return `/api/v1/analytics/utilization?${window(monthStart, shiftDay(monthStart, 27))}&period=${i % 2 ? 'week' : 'day'}&page_size=${10 + (i % 10) * 10}${filter}`;
  }
  const quarter = window(shiftDay(today, -90), today);
  if (kind < 12) return `/api/v1/analytics/users?${quarter}&period=week&page_size=13`;
  if (kind < 15) return `/api/v1/analytics/revenue?${quarter}&period=week&page_size=50&payment_status=paid`;
  if (kind < 17) return `/api/v1/analytics/impact?${yearTo(today)}&period=month&page_size=20`;
  const sensorUnit = sensor.units[i % sensor.units.length]!.id;
  const day = shiftDay(sensor.lastDay, -(i % Math.min(30, daysBetween(sensor.firstDay, sensor.lastDay))));
  return `/api/v1/sensor-data?cooling_unit_id=${sensorUnit}&${window(day, day)}&page_size=100`;
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
      const paths = Array.from(
        { length: pages },
        (_, i) => `/api/v1/analytics/revenue?${window(shiftDay(today, -29), today)}&page_size=10&page=${i + 1}`,
      );
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
        `/api/v1/analytics/users?${year}&period=day&page_size=1000`,
        ...['utilization', 'revenue', 'impact'].map(
          (endpoint) => `/api/v1/analytics/${endpoint}?${year}&period=day&page_size=1000&page=${1 + ((lap * 7) % pages)}`,
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
        path: `${context.pathPrefix}/api/v1/api-tokens?page_size=20`,
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
