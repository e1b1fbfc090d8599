// The sender: every process of the service (WEBHOOK_DELIVERY=on) claims due deliveries from the
// database and sends them. A claim is a lease (SKIP LOCKED, leased_until), so processes and
// instances never send one delivery at once, and a process that dies mid-attempt leaves its lease
// to run out: another sends the delivery again (at least once; receivers dedupe by webhook-id).
// The claim writes each attempt's row in the log before it is sent, and marks those whose lease ran
// out unanswered 'interrupted' (sql/queries/webhooks.sql, claimDue): the log shows the killed
// attempt too, at no statement more than the claim and the outcome's record.
// Each process looks for due deliveries every POLL_MS (an indexed read of the pending ones,
// nothing when there are none) and again at once while it finds work: a plain query, so it works
// through a transaction-mode pooler, where LISTEN cannot (docs/webhooks.md, "Delivery").
import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { loadQueries } from '../db/sql.js';
import { type Clock, DAY_MS } from '../time.js';
import { attemptDelivery, type AttemptOutcome } from './delivery.js';
import { MAX_ATTEMPTS, retryAfterMs, retryAt } from './events.js';
import { writeDueReminders } from './reminders.js';
import { type CursorOf, writeSensorNotices } from './sensor-notices.js';
import type { WebhookSettings } from './settings.js';

const sql = loadQueries('webhooks', ['claimDue', 'recordAttempt', 'disableFailing', 'insertEvent', 'queueStats', 'pruneEvents']);

/** How often an idle process looks for due deliveries: an event waits at most this long to be sent. */
export const POLL_MS = 250;
/** Expiry reminders are looked for, and old events removed, this often. */
const REMINDERS_EVERY_MS = 60_000;
/** Endpoints due a sensor_data.changed notice are looked for this often (each is told at most once a minute). */
const SENSOR_NOTICES_EVERY_MS = 5_000;
/** How long events (and their log) are kept: how far back a replay reaches (docs/webhooks.md). */
export const EVENTS_KEPT_MS = 30 * DAY_MS;
/** A lease outlives the attempt's deadline by this much (a slow commit of its outcome). */
const LEASE_MARGIN_MS = 10_000;

interface Claimed {
  id: string;
  attempts: number;
  /** its row in the log, 'sending' until recordAttempt */
  attempt_id: string;
  endpoint_id: string;
  company_id: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  message_id: string;
  type: string;
  occurred_at: Date;
  data: unknown;
}

/** A row of claimDue: a claimed delivery, or nulls when it claimed none; each with the attempts it marked interrupted. */
type ClaimRow = { interrupted: number } & ({ [K in keyof Claimed]: Claimed[K] } | { [K in keyof Claimed]: null });

/** An attempt's outcome: delivered, failed and to be tried again, or failed for good. */
export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed';

export interface DeliveryObserver {
  /** one attempt's outcome, for metrics */
  attempted(outcome: DeliveryOutcome, durationMs: number): void;
  /** attempts a claim found abandoned (their process stopped before the answer was recorded) */
  interrupted(count: number): void;
}

export interface QueueStats {
  /** deliveries not yet delivered nor failed: due, or waiting for a retry */
  pending: number;
  /** how long the oldest delivery a process could send now has waited, in seconds (0: none) */
  oldestDueSeconds: number;
}

/**
 * The queue as the metrics show it, at `now`. Any process reads it, sending or not: with
 * WEBHOOK_DELIVERY off everywhere, the oldest due delivery's wait is what shows that nobody sends.
 * The wait counts only deliveries claimDue would take (docs/runbooks.md): one held by its endpoint
 * (disabled, at its in-flight limit, an earlier delivery of its token retrying) waits on the
 * partner, not on the sender.
 */
export async function readQueueStats(pool: pg.Pool, now: Date, perEndpointInFlight: number): Promise<QueueStats> {
  const { rows } = await pool.query<{ pending: number; oldest_due_seconds: number }>(sql.queueStats, [now, perEndpointInFlight]);
  return { pending: rows[0]!.pending, oldestDueSeconds: rows[0]!.oldest_due_seconds };
}

export interface DispatcherOptions {
  pool: pg.Pool;
  clock: Clock;
  log: FastifyBaseLogger;
  settings: WebhookSettings;
  /** the change feed's cursor of a company at a position (sensor_data.changed carries two) */
  cursorOf: CursorOf;
  observer?: DeliveryObserver;
}

export function createWebhookDispatcher(options: DispatcherOptions) {
  const { pool, clock, log, settings } = options;
  let closed = false;
  let inFlight = 0;
  let pumping = false;
  let again = false;
  const running = new Set<Promise<void>>();
  let lastReminders = 0;
  let lastSensorNotices = 0;
  // A job that keeps failing (the database away) is said once, when it starts failing, and once
  // when it works again: the poll runs 4 times a second, and its every failure would flood the log
  const failing = new Set<string>();
  const failed = (job: string, error: unknown, message: string) => {
    if (failing.has(job)) return log.debug({ err: error }, message);
    failing.add(job);
    log.warn({ err: error }, `${message} (said once until it works again)`);
  };
  const worked = (job: string) => {
    if (failing.delete(job)) log.info(`webhooks: ${job} works again`);
  };

  async function pump(): Promise<void> {
    if (closed) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        const room = settings.concurrency - inFlight;
        if (room <= 0) break;
        const now = clock.now();
        const leaseUntil = new Date(now.getTime() + settings.timeoutMs + LEASE_MARGIN_MS);
        const { rows } = await pool.query<ClaimRow>(sql.claimDue, [now, room, leaseUntil, settings.perEndpointInFlight]);
        worked('claiming due deliveries');
        const interrupted = rows[0]?.interrupted ?? 0;
        if (interrupted > 0) options.observer?.interrupted(interrupted);
        const claimed = rows.filter((row): row is ClaimRow & Claimed => row.id !== null);
        for (const delivery of claimed) track(deliver(delivery));
        if (claimed.length === room) again = true;
      } while (again && !closed);
    } catch (error) {
      failed('claiming due deliveries', error, 'webhooks: claiming due deliveries failed; trying again at the next poll');
    } finally {
      pumping = false;
    }
  }

  function track(delivery: Promise<void>) {
    inFlight++;
    running.add(delivery);
    void delivery.finally(() => {
      inFlight--;
      running.delete(delivery);
      void pump();
    });
  }

  async function deliver(claimed: Claimed): Promise<void> {
    const now = clock.now();
    const secrets = [claimed.secret];
    if (claimed.previous_secret && claimed.previous_secret_expires_at && claimed.previous_secret_expires_at > now)
      secrets.push(claimed.previous_secret);
    let outcome: AttemptOutcome;
    try {
      outcome = await attemptDelivery({
        url: claimed.url,
        secrets,
        message: { messageId: claimed.message_id, type: claimed.type, occurredAt: claimed.occurred_at, data: claimed.data },
        timeoutMs: settings.timeoutMs,
        allowedNetworks: settings.allowedNetworks,
        now,
      });
    } catch (error) {
      outcome = { ok: false, statusCode: null, error: (error as Error).message, retryAfter: undefined, durationMs: 0 };
    }
    const next = outcome.ok ? null : retryAt(clock.now(), claimed.attempts, retryAfterMs(outcome.retryAfter, clock.now()));
    const status = outcome.ok ? 'succeeded' : next ? 'pending' : 'failed';
    try {
      await pool.query(sql.recordAttempt, [
        claimed.id,
        claimed.attempts,
        now,
        outcome.durationMs,
        outcome.statusCode,
        outcome.error,
        status,
        next,
        claimed.attempt_id,
      ]);
      options.observer?.attempted(status === 'pending' ? 'retrying' : status, outcome.durationMs);
      if (status === 'failed') await disableFailing(claimed);
    } catch (error) {
      // the lease runs out, the next claim marks this attempt interrupted and sends the delivery again
      log.warn({ err: error, delivery: claimed.id }, 'webhooks: recording an attempt failed');
    }
  }

  /** A delivery out of retries: its endpoint disabled, and the company's other endpoints told. */
  async function disableFailing(claimed: Claimed) {
    const now = clock.now();
    const { rows } = await pool.query<{ id: string; company_id: number; url: string }>(sql.disableFailing, [claimed.endpoint_id, now]);
    if (rows.length === 0) return;
    log.warn({ endpoint: claimed.endpoint_id, attempts: MAX_ATTEMPTS }, 'webhooks: an endpoint failed for a day and was disabled');
    await pool.query(sql.insertEvent, [
      claimed.company_id,
      'webhook_endpoint.disabled',
      now,
      { webhook_endpoint: { id: claimed.endpoint_id, url: claimed.url }, reason: 'failing', failed_message_id: claimed.message_id },
      claimed.endpoint_id,
      null,
    ]);
  }

  async function notifySensorChanges() {
    const now = clock.now().getTime();
    if (now - lastSensorNotices < SENSOR_NOTICES_EVERY_MS) return;
    lastSensorNotices = now;
    try {
      await writeSensorNotices(pool, clock.now(), options.cursorOf);
      worked('writing sensor_data.changed notices');
    } catch (error) {
      failed('writing sensor_data.changed notices', error, 'webhooks: writing sensor_data.changed notices failed; trying again');
    }
  }

  async function remind() {
    const now = clock.now().getTime();
    if (now - lastReminders < REMINDERS_EVERY_MS) return;
    lastReminders = now;
    try {
      await writeDueReminders(pool, clock.now());
      await pool.query(sql.pruneEvents, [new Date(now - EVENTS_KEPT_MS)]);
      worked('writing expiry reminders');
    } catch (error) {
      lastReminders = 0;
      failed('writing expiry reminders', error, 'webhooks: writing due expiry reminders (or removing old events) failed; trying again');
    }
  }

  const poll = setInterval(() => {
    void pump();
    void remind();
    void notifySensorChanges();
  }, POLL_MS);
  poll.unref();
  void remind();

  return {
    /** Claims what is due now (tests call it after moving the clock). */
    pump,
    /** Writes the sensor_data.changed notices due now, whatever the last look (tests). */
    async notifySensorChangesNow() {
      lastSensorNotices = 0;
      await notifySensorChanges();
    },
    /** Stops claiming, and waits for the attempts under way (each bounded by its deadline). */
    async close() {
      closed = true;
      clearInterval(poll);
      await Promise.allSettled([...running]);
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
