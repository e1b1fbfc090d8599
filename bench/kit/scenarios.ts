// The request scenarios. Each run is built afresh with fresh tokens, sized from the pilot's rate so
// that no token nears its 100/min limit (the limit is never what is measured), each warm on every
// worker before the measured run.
import { type Layout, MANAGEMENT_WRITES_PER_MINUTE, TOKEN_LIMIT_PER_MINUTE, WINDOW } from './config.js';
import type { BenchToken, CredentialPool, Credentials, Employee } from './credentials.js';
import type { RequestSpec } from './load.js';
import { type MixedData, requestPaths, window } from './request-paths.js';
import type { WebhookRevokePlan } from './webhook-revokes.js';

export interface BuildContext {
  layout: Layout;
  credentials: Credentials;
  seconds: number;
  /** GET /api/v1/sensor-data answers: the mixed traffic includes it */
  sensorAvailable: boolean;
  /** requests a second to size a load's credentials for: the pilot's estimate, else `ceiling` */
  rate(label: string, ceiling: number): number;
  /** the busiest second the pilot measured for a load (2xx or not); null in the pilot itself and when planning */
  pilotPeak?(label: string): number | null;
}

export interface Load {
  label: string;
  connections: number;
  /** seconds of the measured run, when not the run's default */
  seconds?: number;
  /** a steady stream of this many requests a second instead of a flood */
  overallRate?: number;
  requests: RequestSpec[];
  /** sent before the measured run, each connection walking the whole list (load.ts, `spread`) */
  warmup: { connections: number; amount: number; requests: RequestSpec[] } | null;
  /** run the load generator at nice 10 (the event-loop scenario) */
  nice?: boolean;
}

export interface Scenario {
  id: string;
  title: string;
  requiresSensor?: boolean;
  /** sample the servers' event-loop delay around the run (P5) */
  eventLoop?: boolean;
  /** measured on the project alone: the reference has nothing to compare (P16: it answers no If-None-Match) */
  projectOnly?: boolean;
  /** sequential phases of concurrent loads; the first load of the first phase is the headline */
  build(context: BuildContext): Load[][];
  /** tokens revoked through the API beside the measured run's phases, each timed to its webhook (P17, kit/webhook-revokes.ts) */
  webhookRevokes?(context: BuildContext): WebhookRevokePlan;
}

/** one warm-up connection per worker: the cluster hands new connections out in turn */
const WARM_CONNECTIONS = 2;
const ENTRIES_PER_TOKEN = 5;
/** a token's share of a run: its limit less the warm-up, one partial lap of the list, a margin */
const RUN_BUDGET = TOKEN_LIMIT_PER_MINUTE - WARM_CONNECTIONS - ENTRIES_PER_TOKEN - 3;
/** each token's warm-up request: cheap, and readable by every bench token (all scopes) */
const WARM_PATH = `/api/v1/analytics/revenue?start_date=2025-06-01&end_date=2025-06-01&page_size=1`;

/** An If-None-Match naming the path's current ETag, asked before the load runs (scenario-runs.ts `resolved`). */
export const CURRENT_ETAG = '<the ETag of this path>';

/** A header never sent: `page=N` is to be reached by the cursor page N - 1 gives (scenario-runs.ts `resolved`). */
export const BY_CURSOR = 'x-bench-by-cursor';

const bearer = (credential: BenchToken | Employee) => ({
  authorization: `Bearer ${'raw' in credential ? credential.raw : credential.jwt}`,
});

/** `entries` requests (more when the rate needs more tokens), entry i with token i mod T, each token warmed on each worker. */
function tokenLoad(
  label: string,
  connections: number,
  pool: CredentialPool<BenchToken>,
  plan: { rate: number; seconds: number; entries: number },
  pathOf: (token: BenchToken, i: number) => string,
): Load {
  const count = Math.max(2, Math.ceil(plan.entries / ENTRIES_PER_TOKEN), Math.ceil((plan.rate * plan.seconds) / RUN_BUDGET));
  const tokens = pool.take(count);
  const requests = Array.from({ length: Math.max(plan.entries, tokens.length) }, (_, i): RequestSpec => {
    const token = tokens[i % tokens.length]!;
    return { method: 'GET', path: pathOf(token, i), headers: bearer(token) };
  });
  const warm = tokens.map((token): RequestSpec => ({ method: 'GET', path: WARM_PATH, headers: bearer(token) }));
  return {
    label,
    connections,
    requests,
    warmup: { connections: WARM_CONNECTIONS, amount: WARM_CONNECTIONS * warm.length, requests: warm },
  };
}

const YEAR = window(WINDOW.first, WINDOW.last);
const JUNE = window('2025-06-01', '2025-06-30');

/** The sensor-data requests on the bench's data set (its sensor units hold the whole window). */
const sensorPaths = {
  /** 30 days of one unit: 5,760 raw rows, pages 1..5 of 1,000 (P2) */
  rawPage: (unitId: number, page: number) => requestPaths.rawPage(unitId, JUNE, page),
  /** 365 days of one unit, hourly: 17,520 records, pages 1..17 of 1,000 */
  hourlyPage: (unitId: number, page: number) => requestPaths.hourlyPage(unitId, window(WINDOW.first, '2025-12-31'), page),
  /** every sensor unit, the whole window, raw: ~1 M rows, so page 500 of 1,000 is half-way (P3) */
  deepPage: (page: number) => requestPaths.deepPage(YEAR, page),
  /** every sensor unit's hourly year as one bulk pull: ~260,000 records (P5 and P8 beside the mixed traffic) */
  bulkYear: (format: 'csv' | 'parquet') => requestPaths.bulk(window(WINDOW.first, '2025-12-31'), format),
};

/**
 * Upper bounds of each load's rate: they size the pilots and the credential pools, and cap every
 * run's sizing, so they sit well above what a quiet machine serves (below it, runs fall short of tokens).
 */
const CEILING = {
  bulk: 20,
  small: 8000,
  sensorRaw: 1500,
  sensorHourly: 600,
  deep: 1500,
  heavy: 200,
  large: 200,
  mixed: 1500,
  management: 6000,
};

/** Pages 1..`pages` of every sensor unit in turn, 8 connections. */
function everySensorUnit(
  { credentials, layout, seconds, rate }: BuildContext,
  label: string,
  ceiling: number,
  pages: number,
  pathOf: (unitId: number, page: number) => string,
): Load {
  const units = layout.sensorUnitIds;
  const plan = { rate: rate(label, ceiling), seconds, entries: units.length * pages };
  return tokenLoad(label, 8, credentials.alpha, plan, (_, i) => pathOf(units[Math.floor(i / pages) % units.length]!, 1 + (i % pages)));
}

/** P16's two loads: the same page, plain and revalidated. */
export const CONDITIONAL_LOADS = { plain: 'plain (200)', revalidated: 'If-None-Match (304)' } as const;

/** P17's revokes: a steady trickle, as employees revoke, not a flood (P7 measures a revoke under load). */
const REVOKES_PER_SECOND = 2;
/** an employee's revokes in a run, under the 120 writes a minute of its rate limit whatever the run's length */
const REVOKES_PER_EMPLOYEE = MANAGEMENT_WRITES_PER_MINUTE - 20;
/** P17's mixed traffic, at half the rate its pilot measured */
export const WEBHOOK_MIXED_LOAD = 'mixed beside revokes';

export const scenarios: Scenario[] = [
  {
    id: 'small-page',
    title: 'Warm-token analytics page',
    build: ({ credentials, seconds, rate }) => {
      const label = 'revenue page_size 10';
      const plan = { rate: rate(label, CEILING.small), seconds, entries: 120 };
      return [[tokenLoad(label, 24, credentials.alpha, plan, (_, i) => requestPaths.revenuePage(JUNE, 1 + (i % 120)))]];
    },
  },
  {
    id: 'sensor-raw',
    title: 'Sensor data, raw 1,000-row pages',
    requiresSensor: true,
    build: (context) => [[everySensorUnit(context, 'raw page_size 1000', CEILING.sensorRaw, 5, sensorPaths.rawPage)]],
  },
  {
    id: 'sensor-hourly',
    title: 'Sensor data, hourly 1,000-row pages',
    requiresSensor: true,
    build: (context) => [[everySensorUnit(context, 'hourly page_size 1000', CEILING.sensorHourly, 17, sensorPaths.hourlyPage)]],
  },
  {
    id: 'deep-walk',
    title: 'Deep pagination: page 1 vs page 500',
    requiresSensor: true,
    build: ({ credentials, seconds, rate }) => {
      const pairs = seconds >= 12 ? 4 : 2;
      const phaseSeconds = Math.max(2, Math.round(seconds / (2 * pairs)));
      const pages = Array.from({ length: pairs }, (_, k) => (k % 2 === 0 ? [1, 500] : [500, 1])).flat();
      return pages.map((page) => {
        const label = `page ${page}`;
        const plan = { rate: rate(label, CEILING.deep), seconds: phaseSeconds, entries: 1 };
        const load = tokenLoad(label, 4, credentials.alpha, plan, () => sensorPaths.deepPage(page));
        if (page > 1) load.requests = load.requests.map((spec) => ({ ...spec, headers: { ...spec.headers, [BY_CURSOR]: '1' } }));
        return [{ ...load, seconds: phaseSeconds }];
      });
    },
  },
  {
    id: 'mixed',
    title: 'Mixed partner traffic',
    eventLoop: true,
    build: ({ credentials, layout, seconds, sensorAvailable, rate }) => {
      const plan = { rate: rate('mixed', CEILING.mixed), seconds, entries: 200 };
      return [[tokenLoad('mixed', 24, credentials.mixed, plan, (token, i) => mixedPath(token, i, layout, sensorAvailable))]];
    },
  },
  {
    id: 'management',
    title: 'Management: list and create tokens',
    build: ({ credentials, seconds, rate }) => {
      // each manager's 5 entries (4 reads, 1 write) once a lap: laps within 120 writes a minute
      const laps = MANAGEMENT_WRITES_PER_MINUTE - 2 - 5;
      const managers = credentials.managers.take(Math.max(2, Math.ceil((rate('list + create', CEILING.management) * seconds) / 5 / laps)));
      const warmers = credentials.managers.take(WARM_CONNECTIONS);
      const requestsOf = (list: Employee[]) =>
        list.flatMap((manager, i): RequestSpec[] => [
          ...Array.from({ length: 4 }, (): RequestSpec => ({
            method: 'GET',
            path: requestPaths.tokenList,
            headers: bearer(manager),
          })),
          {
            method: 'POST',
            path: '/api/v1/api-tokens',
            headers: { ...bearer(manager), 'content-type': 'application/json' },
            body: JSON.stringify({ name: `bench ${i}`, scopes: ['utilization', 'revenue'] }),
          },
        ]);
      const warm = requestsOf(warmers);
      return [
        [
          {
            label: 'list + create',
            connections: 16,
            requests: requestsOf(managers),
            warmup: { connections: WARM_CONNECTIONS, amount: WARM_CONNECTIONS * warm.length, requests: warm },
          },
        ],
      ];
    },
  },
  {
    id: 'large-pages',
    title: 'Largest allowed responses',
    build: ({ credentials, layout, seconds, rate, sensorAvailable }) => {
      const pages = Math.ceil((layout.heavy.unitIds.length * WINDOW.days) / 1000);
      const endpoints = ['users', 'utilization', 'revenue', 'impact', ...(sensorAvailable ? (['sensor-data'] as const) : [])] as const;
      const plan = { rate: rate('page_size 1000', CEILING.large), seconds, entries: endpoints.length * 6 };
      return [
        [
          tokenLoad('page_size 1000', 8, credentials.alpha, plan, (_, i) => {
            const endpoint = endpoints[i % endpoints.length]!;
            const page = 1 + ((i * 7) % pages);
            if (endpoint === 'sensor-data') return sensorPaths.deepPage(page);
            return requestPaths.largePage(endpoint, YEAR, endpoint === 'users' ? 1 : page);
          }),
        ],
      ];
    },
  },
  {
    id: 'heavy-rollups',
    title: 'Heavy revenue/impact rollups',
    eventLoop: true,
    build: ({ credentials, layout, seconds, rate }) => {
      const pages = Math.ceil((layout.heavy.unitIds.length * WINDOW.days) / 1000);
      const heavyLabel = 'heavy page_size 1000';
      const heavy = tokenLoad(
        heavyLabel,
        6,
        credentials.alpha,
        { rate: rate(heavyLabel, CEILING.heavy), seconds, entries: 24 },
        (_, i) => `/api/v1/analytics/${i % 2 ? 'impact' : 'revenue'}?${YEAR}&period=day&page_size=1000&page=${1 + ((i * 7) % pages)}`,
      );
      const small = tokenLoad(
        'small page_size 10 at 20/s',
        2,
        credentials.alpha,
        { rate: 40, seconds, entries: 10 },
        (_, i) => `/api/v1/analytics/${i % 2 ? 'impact' : 'revenue'}?${JUNE}&page_size=10&page=${1 + (i % 5)}`,
      );
      return [
        [
          { ...heavy, nice: true },
          { ...small, overallRate: 20, nice: true },
        ],
      ];
    },
  },
  bulkBesideMixed('csv'),
  bulkBesideMixed('parquet'),
  {
    id: 'conditional-page',
    title: 'Conditional requests: a 304 against its 200',
    requiresSensor: true,
    projectOnly: true,
    build: ({ credentials, layout, seconds, rate }) => {
      const pairs = seconds >= 12 ? 4 : 2;
      const phaseSeconds = Math.max(2, Math.round(seconds / pairs));
      const path = sensorPaths.rawPage(layout.sensorUnitIds[0]!, 1);
      const labels = Array.from({ length: pairs }, (_, k) =>
        k % 2 === 0 ? [CONDITIONAL_LOADS.plain, CONDITIONAL_LOADS.revalidated] : [CONDITIONAL_LOADS.revalidated, CONDITIONAL_LOADS.plain],
      ).flat();
      return labels.map((label) => {
        // a 304 is not counted: two tokens carry any rate of them, a 200 needs its share of tokens
        const revalidated = label === CONDITIONAL_LOADS.revalidated;
        const plan = { rate: revalidated ? 1 : rate(label, CEILING.sensorRaw), seconds: phaseSeconds, entries: 1 };
        const load = tokenLoad(label, 8, credentials.alpha, plan, () => path);
        if (revalidated)
          load.requests = load.requests.map((spec) => ({ ...spec, headers: { ...spec.headers, 'if-none-match': CURRENT_ETAG } }));
        return [{ ...load, seconds: phaseSeconds }];
      });
    },
  },
  {
    id: 'webhook-revoke-beside-mixed',
    title: 'Token revokes delivered as webhooks beside mixed partner traffic',
    projectOnly: true,
    build: (context) => [[mixedAtHalf(WEBHOOK_MIXED_LOAD, WEBHOOK_MIXED_LOAD, context.seconds, context)]],
    webhookRevokes: ({ credentials, layout, seconds }) => {
      const count = Math.ceil(REVOKES_PER_SECOND * seconds) + 2;
      // besides its revokes, the first employee registers the endpoint and deletes it
      const employees = credentials.managers.take(Math.ceil((count + 2) / REVOKES_PER_EMPLOYEE));
      // the mixed tokens take turns by company: enough of them to find `count` of the employees' company
      const companies = layout.companies.length;
      const tokens = credentials.mixed
        .take(companies * (count + 1))
        .filter((token) => token.companyId === employees[0]!.companyId)
        .slice(0, count);
      return { rate: REVOKES_PER_SECOND, tokens, employees };
    },
  },
];

/** Request i of the mixed traffic with a token: its units in turn, the window's months (the soak's too). */
export function mixedPath(token: BenchToken, i: number, layout: Layout, sensor: boolean): string {
  const company = layout.companies.find((c) => c.id === token.companyId)!;
  const units = token.unitIds.length > 0 ? token.unitIds : company.unitIds;
  const unit = units[i % units.length]!;
  const month = String(1 + (i % 11)).padStart(2, '0');
  const data: MixedData = {
    unit,
    month: window(`2025-${month}-01`, `2025-${month}-28`),
    quarter: window('2025-04-01', '2025-06-29'),
    year: YEAR,
    sensorDay: sensor ? () => ({ unitId: unit, day: `2025-${month}-10` }) : null,
  };
  return requestPaths.mixed(i, data);
}

/** P5's control and its bulk phase: the mixed traffic alone, then beside the pulls, at the same rate. */
export const BESIDE_LOADS = { control: 'mixed alone (control)', beside: 'mixed beside bulk', pulls: 'bulk pulls' } as const;

/** The mixed traffic at half its pilot's busiest second (a saturated machine delays every loop, whatever runs). */
function mixedAtHalf(label: string, pilotLabel: string, seconds: number, context: BuildContext): Load {
  const { credentials, layout, sensorAvailable, rate, pilotPeak } = context;
  const peak = pilotPeak?.(pilotLabel) ?? null;
  const mixedRate = peak === null ? undefined : Math.max(5, Math.round(peak / 2));
  return {
    ...tokenLoad(label, 24, credentials.mixed, { rate: mixedRate ?? rate(label, CEILING.mixed), seconds, entries: 200 }, (token, i) =>
      mixedPath(token, i, layout, sensorAvailable),
    ),
    seconds,
    overallRate: mixedRate,
    nice: true,
  };
}

function bulkBesideMixed(format: 'csv' | 'parquet'): Scenario {
  return {
    id: `bulk-${format}-beside-mixed`,
    title: `Bulk ${format === 'csv' ? 'CSV' : 'Parquet'} pulls beside mixed partner traffic`,
    requiresSensor: true,
    projectOnly: true,
    eventLoop: true,
    build: (context) => {
      const { credentials, seconds, rate } = context;
      const pairs = seconds >= 12 ? 3 : 1;
      const phaseSeconds = Math.max(3, Math.round(seconds / pairs));
      const mixed = (label: string) => mixedAtHalf(label, BESIDE_LOADS.control, phaseSeconds, context);
      // a token per pull: a token streams one pull at a time on a process (BULK_STREAMS_PER_TOKEN),
      // and 2 connections keep at most 2 pulls open, the limit of one process
      const pulls = (): Load => ({
        label: BESIDE_LOADS.pulls,
        connections: 2,
        seconds: phaseSeconds,
        nice: true,
        requests: credentials.alpha.take(Math.max(4, Math.ceil(rate(BESIDE_LOADS.pulls, CEILING.bulk) * phaseSeconds))).map((token) => ({
          method: 'GET',
          path: sensorPaths.bulkYear(format),
          headers: { ...bearer(token), 'accept-encoding': 'gzip' },
        })),
        warmup: null,
      });
      const order = Array.from({ length: pairs }, (_, k) => (k % 2 === 0 ? ['control', 'beside'] : ['beside', 'control'])).flat();
      return order.map((phase) => (phase === 'control' ? [mixed(BESIDE_LOADS.control)] : [mixed(BESIDE_LOADS.beside), pulls()]));
    },
  };
}
