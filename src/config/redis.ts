// Redis: one server (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES), never both, and the
// prefix of every key and channel so deployments may share one Redis.
import { isIP } from 'node:net';
import { z } from 'zod';
import { ConfigError, connectionUrlProblem, HOST_NAME } from './checks.js';
import { optionalText } from './env.js';

export interface RedisNode {
  host: string;
  port: number;
}

export const redisVariables = {
  REDIS_URL: optionalText.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .superRefine((value, ctx) => {
        const problem = connectionUrlProblem(value, 'ioredis');
        if (problem) return ctx.addIssue({ code: 'custom', message: problem });
        // ioredis reads the database number from the path
        if (!/^\/?(\d{1,2})?$/.test(new URL(value).pathname)) {
          ctx.addIssue({ code: 'custom', message: 'must name a database number as its path, if any (redis://host:6379/0)' });
        }
      })
      .optional(),
  ),
  REDIS_CLUSTER_NODES: optionalText.pipe(
    z
      .string()
      .transform((list) => list.split(',').map((node) => node.trim()))
      .superRefine((nodes, ctx) => {
        for (const node of nodes) {
          const match = /^(.+):(\d{1,5})$/.exec(node);
          const host = match?.[1]?.replace(/^\[(.*)\]$/, '$1') ?? '';
          if (!match || (isIP(host) === 0 && !HOST_NAME.test(host)) || Number(match[2]) < 1 || Number(match[2]) > 65535) {
            ctx.addIssue({
              code: 'custom',
              message: `must be a comma-separated list of host:port (e.g. 10.0.0.1:7000,10.0.0.2:7000), not "${node.slice(0, 100)}"`,
            });
            return;
          }
        }
      })
      .transform((nodes) =>
        nodes.map((node) => {
          const at = node.lastIndexOf(':');
          return { host: node.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(node.slice(at + 1)) };
        }),
      )
      .optional(),
  ),
  REDIS_KEY_PREFIX: optionalText.pipe(
    z
      .string()
      .regex(/^[\w:.-]{1,64}$/, 'must be 1..64 letters, digits, ":", ".", "_" or "-"')
      .optional(),
  ),
};

export interface RedisConfig {
  redisUrl: string | null;
  /** A Redis Cluster instead of REDIS_URL: its seed nodes */
  redisClusterNodes: RedisNode[] | null;
  /** Prefix of every Redis key and channel: deployments may share one Redis. */
  redisKeyPrefix: string;
}

export function redisConfigOf(e: z.infer<z.ZodObject<typeof redisVariables>>): RedisConfig {
  const redisUrl = e.REDIS_URL ?? null;
  const redisClusterNodes = e.REDIS_CLUSTER_NODES ?? null;
  if (redisUrl && redisClusterNodes) throw new ConfigError('REDIS_CLUSTER_NODES', 'cannot be combined with REDIS_URL: set one of them');
  return { redisUrl, redisClusterNodes, redisKeyPrefix: e.REDIS_KEY_PREFIX ?? 'coldtrack:' };
}
