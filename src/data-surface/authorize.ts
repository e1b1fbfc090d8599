// Authorization of the data surface, in one place: the endpoint's scope, then the units a request
// may read. Queries receive only the UnitScope this returns, never ids straight from the request,
// so no route can widen what a token sees.
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { loadQueries } from '../db/sql.js';
import { insufficientScope, notFound } from '../http/errors.js';
import type { AuthenticatedToken } from '../tokens/authenticator.js';
import type { Scope } from '../tokens/scopes.js';
import { CONNECT_TIMEOUT_MS, lookup, poolSettings } from '../db/pool.js';
import { notificationsArrive } from '../db/session.js';

const sql = loadQueries('company-units', ['liveUnitsOfCompany', 'retiredUnitsOfCompany']);

export interface UnitScope {
  companyId: number;
  /** ascending; may be empty (a company without live units); shared between requests: read-only */
  unitIds: readonly number[];
}

export interface UnitFilters {
  cooling_unit_id?: number | undefined;
  location_id?: number | undefined;
}

export interface RetiredUnit {
  id: number;
  location_id: number;
  deleted_at: Date;
}

interface CompanyUnit {
  id: number;
  location_id: number;
}

// A company's units are read once per process and kept until the database says they changed:
// a trigger announces every unit added, moved or soft-deleted on UNIT_CHANNEL when the change
// commits (sql/migrations/007), and the process drops that company's entry as it hears it. While
// this process is not listening (starting, or its listening connection lost), nothing is cached:
// every request reads the directory, so no announcement can be missed. The TTL is a backstop.
// Listening needs a session (DATABASE_SESSION_URL, else DATABASE_URL): a connection is trusted
// only once a notification sent through the pool has reached it (src/db/session.ts); through a
// transaction-mode pooler none does, and the process keeps reading the directory on every request.
const UNIT_CHANNEL = 'coldtrack_unit_directory';
const UNIT_DIRECTORY_TTL_MS = 10 * 60_000;
const RELISTEN_MS = 1000;
/** After a listener that heard nothing: a configuration problem, not a blip. */
const RELISTEN_NOT_A_SESSION_MS = 30_000;

export interface AccessControlOptions {
  /** Listen for changes of the unit directory (default); off: no caching at all. */
  listen?: boolean;
  /** The connection to listen on (a session); default: the pool's own URL. */
  sessionUrl?: string | null | undefined;
  onListenerError?: (error: Error) => void;
  /** The listener's connection does not deliver notifications (said once per process). */
  onNotASession?: () => void;
}

export function createAccessControl(pool: pg.Pool, options: AccessControlOptions = {}) {
  const unitsByCompany = new LRUCache<number, CompanyUnit[]>({
    max: 10_000,
    ttl: UNIT_DIRECTORY_TTL_MS,
    fetchMethod: async (companyId) => (await lookup<CompanyUnit>(pool, sql.liveUnitsOfCompany, [companyId])).rows,
  });
  // the retired (soft-deleted) units, which analytics report on up to their deletion: the same
  // announcements keep both directories current
  const retiredByCompany = new LRUCache<number, RetiredUnit[]>({
    max: 10_000,
    ttl: UNIT_DIRECTORY_TTL_MS,
    fetchMethod: async (companyId) => (await lookup<RetiredUnit>(pool, sql.retiredUnitsOfCompany, [companyId])).rows,
  });
  const forgetAll = () => {
    unitsByCompany.clear();
    retiredByCompany.clear();
  };
  let listening = false;
  let listener: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let saidNotASession = false;
  // a bare session: no start-up parameters a session-mode pool might refuse, no statement deadline
  const sessionUrl = options.sessionUrl ?? poolSettings(pool).connectionString;
  const sessionConfig: pg.ClientConfig = {
    connectionString: sessionUrl,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'coldtrack-api-listener',
  };

  async function listen() {
    if (closed || options.listen === false) return;
    const client = new pg.Client(sessionConfig);
    const lost = (error?: Error, retryMs = RELISTEN_MS) => {
      if (listener !== client) return;
      listening = false;
      listener = null;
      forgetAll();
      if (error) options.onListenerError?.(error);
      client.end().catch(() => {});
      if (!closed) retry = setTimeout(() => void listen(), retryMs).unref();
    };
    listener = client;
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel !== UNIT_CHANNEL) return;
      unitsByCompany.delete(Number(message.payload));
      retiredByCompany.delete(Number(message.payload));
    });
    try {
      await client.connect();
      if (!(await notificationsArrive(client, pool))) {
        if (!saidNotASession) options.onNotASession?.();
        saidNotASession = true;
        lost(undefined, RELISTEN_NOT_A_SESSION_MS);
        return;
      }
      await client.query(`LISTEN ${UNIT_CHANNEL}`);
      // whatever was cached before this connection listened may be stale
      forgetAll();
      listening = listener === client;
    } catch (error) {
      lost(error as Error);
    }
  }
  void listen();

  /**
   * From the cache while listening, else straight from the database. An announcement that arrives
   * while the cache is fetching deletes the entry, and lru-cache rejects that fetch: the request
   * then reads the database itself (the fetch's answer may predate the change) instead of a 500.
   */
  async function cachedOrDirect<T extends object>(
    cache: LRUCache<number, T[]>,
    companyId: number,
    direct: () => Promise<T[]>,
  ): Promise<T[]> {
    if (!listening) return direct();
    try {
      return (await cache.fetch(companyId)) ?? (await direct());
    } catch {
      // lru-cache rejects a fetch whose entry was deleted meanwhile ("deleted"); a database
      // failure of the fetch fails the direct read the same way, as a 503
      return direct();
    }
  }

  // the ids of a cached unit list, computed once per list: most requests (a company-wide token,
  // no filter) read exactly those, and a page of ten records should not rebuild a 1,000-id array
  const idsOfList = new WeakMap<readonly CompanyUnit[], readonly number[]>();
  const idsOf = (units: readonly CompanyUnit[]) => {
    let ids = idsOfList.get(units);
    if (!ids) idsOfList.set(units, (ids = units.map((unit) => unit.id)));
    return ids;
  };

  const unitsOf = async (companyId: number) =>
    cachedOrDirect(unitsByCompany, companyId, async () => (await lookup<CompanyUnit>(pool, sql.liveUnitsOfCompany, [companyId])).rows);

  return {
    /** The company's soft-deleted units, with when each was deleted (cached like the live ones). */
    async retiredUnits(companyId: number): Promise<RetiredUnit[]> {
      return cachedOrDirect(
        retiredByCompany,
        companyId,
        async () => (await lookup<RetiredUnit>(pool, sql.retiredUnitsOfCompany, [companyId])).rows,
      );
    },
    /** Whether changes of the unit directory reach this process (else it caches nothing). */
    listening: () => listening,
    async close() {
      closed = true;
      clearTimeout(retry);
      const client = listener;
      listener = null;
      listening = false;
      await client?.end().catch(() => {});
    },
    async authorize(token: AuthenticatedToken, scope: Scope, filters: UnitFilters): Promise<UnitScope> {
      if (!token.scopes.has(scope)) throw insufficientScope(scope);
      let units = await unitsOf(token.companyId);
      if (token.coolingUnitIds.length > 0) {
        const granted = new Set(token.coolingUnitIds);
        units = units.filter((unit) => granted.has(unit.id));
      }
      if (filters.cooling_unit_id !== undefined) {
        units = units.filter((unit) => unit.id === filters.cooling_unit_id);
        if (units.length === 0) throw notFound(`No cooling unit ${filters.cooling_unit_id} is readable with this token`);
      }
      if (filters.location_id !== undefined) {
        units = units.filter((unit) => unit.location_id === filters.location_id);
        if (units.length === 0) throw notFound(`No location ${filters.location_id} with units readable by this token`);
      }
      return { companyId: token.companyId, unitIds: idsOf(units) };
    },
  };
}

export type AccessControl = ReturnType<typeof createAccessControl>;
