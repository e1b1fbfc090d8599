// What `npm run loadtest` asks of the deployment, through its API and the partner client (never a
// database): the employee's company and units, where the sensor history lies, and the run's API
// tokens, created with the employee's JWT and revoked at the end. Raw tokens stay in memory.
import { ColdtrackApiError, ColdtrackClient, RateBudget } from '@coldtrack/client';
import { formatDay, MAX_SENSOR_WINDOW_DAYS, parseDay } from '../../src/data-surface/window.js';
import { DAY_MS } from '../../src/time.js';
import type { Scope } from '../../src/tokens/scopes.js';

/** `day` moved by `days` (negative: earlier), both YYYY-MM-DD, UTC. */
export const shiftDay = (day: string, days: number) => formatDay(parseDay(day) + days * DAY_MS);
export const daysBetween = (first: string, last: string) => (parseDay(last) - parseDay(first)) / DAY_MS + 1;

export interface SensorHistory {
  available: boolean;
  /** why not, when not available */
  reason: string;
  /** first and last day with readings in the last ten years (the daily aggregates' longest window) */
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
  /** the JWT's company and its live units; null and empty with API tokens only */
  companyId: number | null;
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

/** A fresh budget: the loadtest's own calls never wait for one another client in the process spent. */
const clientFor = (baseUrl: URL, token: string) =>
  new ColdtrackClient({ baseUrl: baseUrl.href, token, budget: new RateBudget(), retries: 2 });

/** The employee's company and every live unit of it. */
export async function discoverUnits(baseUrl: URL, jwt: string): Promise<{ companyId: number; unitIds: number[] }> {
  const client = clientFor(baseUrl, jwt);
  const unitIds: number[] = [];
  for (let page = 1; ; page++) {
    const body = await client.coolingUnits.list({ page, page_size: 1000 });
    unitIds.push(...body.data.map((unit) => unit.id));
    if (!body.meta.pagination.has_next || body.data.length === 0) return { companyId: body.meta.company_id, unitIds };
  }
}

/**
 * Where the sensor history lies, in four or five requests with a token that may read sensor-data:
 * the oldest and newest daily record of the last ten years, the daily records of the last full
 * day (which units, how many readings), and the raw page count of the last year.
 */
export async function probeSensorHistory(baseUrl: URL, token: string, today: string): Promise<SensorHistory> {
  const client = clientFor(baseUrl, token);
  const daily = { aggregation: 'daily', start_date: shiftDay(today, -(MAX_SENSOR_WINDOW_DAYS.daily - 1)), end_date: today } as const;
  const dailyOf = (day: string) => client.sensorData({ aggregation: 'daily', start_date: day, end_date: day, page_size: 1000 });
  try {
    const oldest = await client.sensorData({ ...daily, page_size: 1, page: 1 });
    const total = oldest.meta.pagination.total_count;
    if (total === 0 || !oldest.data[0])
      return { ...NO_SENSOR_HISTORY, reason: `no sensor readings between ${daily.start_date} and ${today}` };
    const newest = await client.sensorData({ ...daily, page_size: 1, page: total });
    const firstDay = oldest.data[0].timestamp.slice(0, 10);
    const lastDay = newest.data[0]?.timestamp.slice(0, 10) ?? firstDay;
    // the last day may still be filling: the one before it is whole, when it has readings
    let day = await dailyOf(shiftDay(lastDay, -1));
    if (day.data.length === 0) day = await dailyOf(lastDay);
    const perUnit = new Map<number, SensorHistory['units'][number]>();
    for (const { cooling_unit_id: id, sample_count } of day.data) {
      const unit = perUnit.get(id) ?? { id, readingsPerDay: 0, kinds: 0 };
      perUnit.set(id, { id, readingsPerDay: unit.readingsPerDay + sample_count, kinds: unit.kinds + 1 });
    }
    const deepFirst = [firstDay, shiftDay(lastDay, -(MAX_SENSOR_WINDOW_DAYS.raw - 1))].sort().at(-1)!;
    const deep = await client.sensorData({ start_date: deepFirst, end_date: lastDay, page_size: 1000, page: 1 });
    const units = [...perUnit.values()].sort((a, b) => a.id - b.id);
    return { available: true, reason: '', firstDay, lastDay, units, deepPages: Math.max(1, deep.meta.pagination.total_pages) };
  } catch (error) {
    if (!(error instanceof ColdtrackApiError)) throw error;
    return { ...NO_SENSOR_HISTORY, reason: `GET /api/v1/sensor-data answered ${error.status} (${error.code})` };
  }
}

export interface RevocationOutcome {
  revoked: number;
  /** what may still be active: tokens by id (or a creation that went unanswered), with why */
  failed: { id: string; reason: string }[];
}

const describe = (error: unknown) =>
  error instanceof ColdtrackApiError ? `${error.status} ${error.code}` : error instanceof Error ? error.message : String(error);

/**
 * The run's tokens, `<namePrefix>i`, expiring a day later should the revocation never run.
 * revokeAll() revokes them once, whoever asks first (the run's end, an error, Ctrl-C), after the
 * creation in flight has answered.
 */
export class LoadtestTokens {
  private readonly client: ColdtrackClient;
  /** the ids of the tokens created */
  private readonly created: string[] = [];
  /** the name of a token whose creation failed without saying that none was made (a timeout, a 5xx) */
  private unanswered: string | null = null;
  private inFlight: Promise<unknown> = Promise.resolve();
  private revocation: Promise<RevocationOutcome> | null = null;
  /** what the revocation did, once it has finished */
  outcome: RevocationOutcome | null = null;
  readonly expiresAt: Date;

  constructor(
    baseUrl: URL,
    jwt: string,
    readonly namePrefix: string,
    private readonly log: (line: string) => void,
    now = new Date(),
  ) {
    // writes have a budget of their own (120 a minute): the client waits for it rather than be refused
    this.client = new ColdtrackClient({
      baseUrl: baseUrl.href,
      token: jwt,
      budget: new RateBudget(),
      onEvent: (event) => {
        if (event.type === 'rate-limit-wait')
          log(`  waiting ${(event.ms / 1000).toFixed(0)} s for the employee's write budget (120 a minute)`);
      },
    });
    this.expiresAt = new Date(now.getTime() + DAY_MS);
  }

  /** How many were created (and are to be revoked). */
  get count(): number {
    return this.created.length;
  }

  /** Creates `count` tokens with these scopes, one after another; their raw values. */
  async create(count: number, scopes: Scope[]): Promise<string[]> {
    const raw: string[] = [];
    for (let i = 1; i <= count; i++) {
      if (this.revocation) throw new Error('interrupted while creating tokens');
      const name = `${this.namePrefix}${i}`;
      const creation = this.client.tokens.create({ name, scopes, expires_at: this.expiresAt.toISOString() }).then(
        ({ token, id }) => {
          this.created.push(id); // before a revocation waiting for this creation reads the list
          return token;
        },
        (error: unknown) => {
          // only a refusal (400, 401, 403...) says that no token was made
          if (!(error instanceof ColdtrackApiError && error.permanent)) this.unanswered = name;
          throw error;
        },
      );
      this.inFlight = creation.catch(() => undefined);
      raw.push(await creation);
      if (i === count || i % 25 === 0) this.log(`  created ${i} of ${count} tokens`);
    }
    return raw;
  }

  revokeAll(): Promise<RevocationOutcome> {
    this.revocation ??= this.revokeEverything().then((outcome) => (this.outcome = outcome));
    return this.revocation;
  }

  private async revokeEverything(): Promise<RevocationOutcome> {
    await this.inFlight;
    const outcome: RevocationOutcome = { revoked: 0, failed: [] };
    if (this.created.length === 0 && !this.unanswered) return outcome;
    this.log(`revoking the ${this.created.length} tokens created`);
    let unreachable: string | null = null;
    const revoke = async (id: string) => {
      if (unreachable) return void outcome.failed.push({ id, reason: unreachable });
      try {
        await this.client.tokens.revoke(id);
        outcome.revoked++;
      } catch (error) {
        outcome.failed.push({ id, reason: describe(error) });
        // no answer after the client's retries: every other token would wait as long for nothing
        if (!(error instanceof ColdtrackApiError)) unreachable = `not tried: the deployment did not answer (${describe(error)})`;
      }
    };
    for (const id of this.created) await revoke(id);
    // a creation without a clear answer may have made its token all the same: found by its name
    if (this.unanswered) {
      try {
        if (unreachable) throw new Error(unreachable);
        for await (const token of this.client.paginate('tokens', { state: 'active' })) {
          if (token.name !== this.unanswered) continue;
          this.log(`  revoking ${token.name}, created without its answer reaching the loadtest`);
          await revoke(token.id);
          break;
        }
      } catch (error) {
        outcome.failed.push({
          id: `(${this.unanswered}, whose creation went unanswered)`,
          reason: `the search for it failed: ${describe(error)}`,
        });
      }
    }
    const failures = outcome.failed.length ? `; ${outcome.failed.length} failed (${outcome.failed[0]!.reason})` : '';
    this.log(`revoked ${outcome.revoked} tokens${failures}`);
    return outcome;
  }
}
