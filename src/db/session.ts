// Whether a connection keeps a session, checked the way it is used: LISTEN on it, NOTIFY from
// another connection, and see the notification arrive. What needs a session (the unit directory's
// LISTEN, the migrations' settings) is checked so before it is trusted: behind a transaction-mode
// pooler (PgBouncer) consecutive statements of one client may run on different server connections,
// so a LISTEN stays behind on a server connection nobody reads (PgBouncer drops what arrives there:
// "got packet 'A' from server when not linked") and a session setting lands on a random one.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';

const PROBE_CHANNEL = 'coldtrack_session_probe';
/** A notification between two connections of one server takes milliseconds; this is for a busy one. */
export const SESSION_PROBE_TIMEOUT_MS = 3000;

type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * True when a notification sent by `notifier` reaches `listener` within `timeoutMs`. The listener
 * listens on the probe channel only for the check. A failed query rejects.
 */
export async function notificationsArrive(
  listener: pg.Client,
  notifier: Queryable,
  timeoutMs = SESSION_PROBE_TIMEOUT_MS,
): Promise<boolean> {
  const payload = randomUUID();
  let timer: NodeJS.Timeout | undefined;
  let onNotification: ((message: pg.Notification) => void) | undefined;
  const arrived = new Promise<boolean>((resolve) => {
    onNotification = (message) => {
      if (message.channel === PROBE_CHANNEL && message.payload === payload) resolve(true);
    };
    listener.on('notification', onNotification);
  });
  try {
    await listener.query(`LISTEN ${PROBE_CHANNEL}`);
    await notifier.query('SELECT pg_notify($1, $2)', [PROBE_CHANNEL, payload]);
    return await Promise.race([arrived, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
  } finally {
    clearTimeout(timer);
    listener.off('notification', onNotification!);
    await listener.query(`UNLISTEN ${PROBE_CHANNEL}`).catch(() => {});
  }
}

/** The one line start-up and `npm run migrate` stop with when the session connection is not one. */
export const notASessionMessage = (purpose: string, timeoutMs = SESSION_PROBE_TIMEOUT_MS) =>
  `${purpose} need a session, and the session connection (DATABASE_SESSION_URL, else DATABASE_URL) does not keep one: ` +
  `a notification sent to it did not arrive within ${timeoutMs / 1000} s (a transaction-mode pooler such as PgBouncer drops them); ` +
  'set DATABASE_SESSION_URL to PostgreSQL itself or to a session-mode pool (docs/operations.md, "PgBouncer")';

/** Throws the one line above unless `listener` keeps a session. */
export async function checkSession(listener: pg.Client, notifier: Queryable, purpose: string): Promise<void> {
  if (!(await notificationsArrive(listener, notifier))) throw Object.assign(new Error(notASessionMessage(purpose)), { name: 'SessionError' });
}
