// PostgreSQL's cancel request, sent the way libpq sends it: a new connection to the same address
// carrying the backend's process id and secret key, which the server (or a pooler such as
// PgBouncer, which holds the client's key and forwards the request to the server connection the
// client is using) answers by cancelling the statement running there, then closing the connection.
// Why the service sends one: a client that stops waiting for a statement (its deadline passed)
// must not leave the server working, or waiting on a lock, for a request that has already failed.
import net from 'node:net';

const CANCEL_REQUEST_CODE = 80877102;

export interface CancelTarget {
  host: string;
  port: number;
  processID: number;
  secretKey: number;
}

/**
 * Sends a cancel request; resolves once the other side has closed the connection (the request is
 * then handed on: PgBouncer closes it after forwarding), or after `waitMs`, or on any error: a
 * cancel is best effort and never fails the caller.
 */
export function sendCancelRequest(target: CancelTarget, waitMs: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = target.host.startsWith('/')
      ? net.connect(`${target.host}/.s.PGSQL.${target.port}`)
      : net.connect(target.port, target.host);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, waitMs);
    socket.once('connect', () => {
      const request = Buffer.alloc(16);
      request.writeInt32BE(16, 0);
      request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
      request.writeInt32BE(target.processID, 8);
      request.writeInt32BE(target.secretKey, 12);
      socket.write(request);
    });
    socket.once('close', done);
    socket.once('error', done);
  });
}
