// Redis clients: one server (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES), the same
// commands either way (the keys of one script or transaction share a hash slot). Commands fail
// fast when Redis is away (no offline queue, short timeout), so a Redis outage degrades the
// service instead of stalling requests behind a reconnect.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisNode } from '../config.js';
import './command-timers.js';

export type RedisClient = Redis | Cluster;

/** Where the shared state lives: one server's URL, or a cluster's seed nodes. */
export type RedisTarget = string | RedisNode[];

// short enough that no request waits long on a Redis that is away, long enough that a busy event
// loop (a timer can fire before a reply already in the socket is read) doesn't fake an outage
export const REDIS_COMMAND_TIMEOUT_MS = 500;

const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2000);

export function createRedis(target: RedisTarget, name: string): RedisClient {
  const options: RedisOptions = {
    connectionName: `coldtrack-${name}`,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 1000,
    retryStrategy,
    lazyConnect: false,
  };
  const redis =
    typeof target === 'string'
      ? // no auto-pipelining on one server: its Pipeline per batch cost the cheapest page more
        // than it saved (bench P1 small-page); writesBatchedPerTurn shares the system call without it.
        // No autoResubscribe: the revocation subscriber subscribes again itself on every 'ready',
        // its failure handled (src/tokens/revocation.ts), while ioredis's own resubscribe on
        // reconnect is fire and forget: a connection that drops again before SUBSCRIBE's reply
        // rejects it unhandled ("Connection is closed."), which ends the worker on a flapping
        // Redis (redis/ioredis#2187, after 5.11). A cluster's subscriber keeps ioredis's own.
        writesBatchedPerTurn(new Redis(target, { ...options, autoResubscribe: false }))
      : new Cluster(target, {
          redisOptions: options,
          enableOfflineQueue: false,
          // kept on a cluster (not measured there): it groups each batch's commands by node
          enableAutoPipelining: true,
          clusterRetryStrategy: retryStrategy,
          // a node that fails over or restarts: follow the new slot owner, briefly
          retryDelayOnFailover: 100,
          retryDelayOnClusterDown: 100,
          maxRedirections: 4,
          slotsRefreshTimeout: 1000,
        });
  // errors surface on the commands that fail; the client keeps reconnecting on its own
  redis.on('error', () => {});
  return redis;
}

/**
 * One server: the commands of a turn of the event loop leave in one write. The socket is corked at
 * the turn's first command and uncorked once its callbacks have run (setImmediate), so a data
 * request's revocation check and rate-limit script, sent from different promise continuations, and
 * the other requests of the same turn, share a system call instead of one each. Not ioredis's
 * auto-pipelining, which defers the same way but builds a Pipeline per batch.
 */
function writesBatchedPerTurn(redis: Redis): Redis {
  let corked: Redis['stream'] | null = null;
  const uncork = () => {
    corked?.uncork();
    corked = null;
  };
  const sendCommand = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    if (corked === null && stream === undefined && redis.status === 'ready') {
      corked = redis.stream;
      corked.cork();
      setImmediate(uncork);
    }
    return sendCommand(command, stream);
  };
  return redis;
}

/** Resolves when the client is connected, or after timeoutMs (Redis may come later: we degrade). */
export async function redisReady(redis: RedisClient, timeoutMs = 3000): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The shared store the configuration names, if any. */
export const redisTarget = (config: { redisUrl: string | null; redisClusterNodes: RedisNode[] | null }): RedisTarget | null =>
  config.redisUrl ?? config.redisClusterNodes;
