// The sensor store's upkeep and watch.
// - postgres profile (TimescaleDB's own jobs do it otherwise): at start, partitions for the coming
//   weeks; then every few hours that again, and compaction of closed months of the aggregate tables, in the
//   background (it can take a while on a large store).
// - both profiles, with that upkeep: the change feed forgets changes older than
//   SENSOR_CHANGES_RETENTION_DAYS (a quick indexed delete; every process may run it, harmlessly).
// - timescale profile: every minute, the sensor policies' state (src/sensors/policy-health.ts)
//   into the sensor_policy_* metrics, and a warning for each new failure. app.sensorPolicies
//   runs that check on demand (tests, tools).
import fp from 'fastify-plugin';
import { createPolicyHealth, type PolicyHealth } from '../sensors/policy-health.js';
import { pruneChanges } from '../sensors/changes.js';
import { compactAggregates, maintainStore, storageProfile } from '../sensors/store.js';
import { DAY_MS, HOUR_MS } from '../time.js';
import type { App } from '../types.js';

const UPKEEP_INTERVAL_MS = 6 * HOUR_MS;
export const POLICY_CHECK_INTERVAL_MS = 60_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** the timescale profile's policy check; null on the postgres profile (known once the app is ready) */
    sensorPolicies: PolicyHealth | null;
  }
}

async function sensorStore(app: App) {
  let upkeepTimer: NodeJS.Timeout | undefined;
  let checkTimer: NodeJS.Timeout | undefined;
  let checking: Promise<unknown> = Promise.resolve();
  let closing = false;
  app.decorate('sensorPolicies', null);

  const upkeep = async (compact: boolean) => {
    try {
      await maintainStore(app.db, app.clock.now());
      await pruneChanges(app.db, new Date(app.clock.now().getTime() - app.config.sensorChangesRetentionDays * DAY_MS));
      if (compact) await compactAggregates(app.db, app.clock.now());
    } catch (error) {
      app.log.warn({ err: error }, 'sensor store upkeep failed; will retry');
    }
  };
  const check = (health: PolicyHealth) => {
    checking = health.check().catch((error: unknown) => {
      if (!closing) app.log.warn({ err: error }, 'sensor policy check failed; will retry in a minute');
    });
  };

  app.addHook('onReady', async () => {
    await upkeep(false);
    upkeepTimer = setInterval(() => void upkeep(true), UPKEEP_INTERVAL_MS).unref();
    const profile = await storageProfile(app.db).catch((error: unknown) => {
      app.log.warn({ err: error }, 'sensor store: could not read the storage profile; sensor policies are not watched');
      return null;
    });
    if (profile !== 'timescale') return;
    const health = createPolicyHealth({ db: app.db, metrics: app.metrics, log: app.log });
    app.sensorPolicies = health;
    check(health);
    checkTimer = setInterval(() => check(health), POLICY_CHECK_INTERVAL_MS).unref();
  });
  app.addHook('onClose', async () => {
    closing = true;
    clearInterval(upkeepTimer);
    clearInterval(checkTimer);
    await checking;
  });
}

export default fp(sensorStore, { name: 'sensor-store', dependencies: ['clock', 'config', 'database', 'metrics'] });
