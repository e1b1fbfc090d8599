// Bulk pulls against a real cluster, for the tests of a token's streams (bulk-streams*.test.ts): a
// world whose company has a few hundred thousand readings (more CSV than the sockets' buffers hold,
// so a client that stops reading holds its stream open), and pulls held open or sent until one
// reaches another worker than a given one.
import http from 'node:http';
import pg from 'pg';
import { type Cluster, createWorld, until, type World } from './harness.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const BULK = '/api/v1/sensor-data/bulk?start_date=2024-06-01&end_date=2024-06-05&format=csv';

/** The harness's world, with five days of 10-second readings of Acme's units. */
export async function createBulkWorld(t: Teardown): Promise<World> {
  const world = await createWorld(t);
  const loader = new pg.Client({ connectionString: world.databaseUrl });
  await loader.connect();
  await loader.query(
    `INSERT INTO sensor_readings (cooling_unit_id, specification_type, recorded_at, value)
     SELECT unit, type::specification_type, at, random() * 10
     FROM unnest($1::int[]) AS unit, unnest('{TEMPERATURE,HUMIDITY}'::text[]) AS type,
          generate_series('2024-06-01'::timestamptz, '2024-06-05 23:59:50', '10 seconds') AS at`,
    [world.acme.unitIds],
  );
  await loader.end();
  return world;
}

export interface HeldPull {
  status: number;
  pid: number;
  /** until the response's head came */
  ms: number;
  /** reads the rest of the body; resolves with its length */
  finish(): Promise<number>;
  /** drops the connection */
  drop(): void;
}

let pulls = 0;
/** A bulk pull whose body is not read (its stream stays open, held back by the client), and the worker that took it. */
export async function holdPull(cluster: Cluster, headers: Record<string, string>): Promise<HeldPull> {
  const requestId = `bulk-${process.pid}-${pulls++}`;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(BULK, cluster.baseUrl), { headers: { ...headers, 'x-request-id': requestId }, agent: false });
    request.setTimeout(15_000, () => request.destroy(new Error('no answer to the bulk pull')));
    request.on('error', reject);
    request.on('response', (response) => {
      const ms = Date.now() - started;
      response.pause();
      response.on('error', () => {});
      void until('the pull in the logs', () => cluster.pidOfRequest(requestId), 8000).then((pid) =>
        resolve({
          status: response.statusCode!,
          pid,
          ms,
          finish: () =>
            new Promise<number>((done, failed) => {
              let length = 0;
              response.on('data', (chunk: Buffer) => (length += chunk.length));
              response.on('end', () => done(length));
              response.on('error', failed);
              response.resume();
            }),
          drop: () => request.destroy(),
        }),
      );
    });
    request.end();
  });
}

/**
 * Pulls (fresh connections) until one is answered by a worker other than `pid`: its status. A
 * pull served on `pid` instead is dropped, and holds its token's slot until its worker has seen
 * the connection go: `released` waits for that before the next try, which would otherwise be
 * refused for the dropped pull rather than for what the test holds.
 */
export async function pullElsewhere(
  cluster: Cluster,
  headers: Record<string, string>,
  pid: number,
  released: () => Promise<unknown> = async () => {},
): Promise<{ status: number; pid: number }> {
  for (let attempt = 0; attempt < 12; attempt++) {
    const pull = await holdPull(cluster, headers);
    if (pull.pid === pid) {
      pull.drop();
      if (pull.status === 200) await released();
      continue;
    }
    if (pull.status === 200) await pull.finish();
    else await pull.finish().catch(() => 0);
    return { status: pull.status, pid: pull.pid };
  }
  throw new Error(`no pull reached a worker other than ${pid} in 12 connections`);
}
