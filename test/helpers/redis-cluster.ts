// A real Redis Cluster for the operations tests: N masters (3 by default), with R replicas each
// (none by default), from redis-server processes on free loopback ports, joined with `redis-cli
// --cluster create`, each with its config file in a private temporary directory. One node can be
// killed (SIGKILL: an outage) and started again on the same ports: it reads its nodes.conf and
// rejoins as the owner of its slots, empty (nothing is saved); with replicas, a killed master's
// replica takes its slots over (a failover) once the others have marked it FAIL, and the old
// master rejoins as a replica. Teardown kills every node and removes the directory.
//
// What a node outage looks like with these defaults (redis.conf's own, except the timeout): until
// `nodeTimeoutMs` has passed only the dead node's slots fail; after it the other masters mark it
// FAIL and, with cluster-require-full-coverage yes, the whole cluster answers CLUSTERDOWN.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../src/free-port.js';
import { reapOnExit } from './reaper.js';

const run = promisify(execFile);

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface RedisClusterOptions {
  /** masters (3 by default; Redis Cluster needs at least 3) */
  masters?: number;
  /** replicas of each master (0 by default): a killed master fails over to one */
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a silent node takes to be marked FAIL (ms, default 2000) */
  nodeTimeoutMs?: number;
  /** cluster-require-full-coverage (default true, as redis.conf has it) */
  requireFullCoverage?: boolean;
}

export interface RedisClusterNode {
  host: '127.0.0.1';
  port: number;
  /** the cluster bus port (cluster-port) */
  busPort: number;
  /** "127.0.0.1:port" */
  address: string;
  running(): boolean;
  /** SIGKILL: an outage, not a clean shutdown. */
  kill(): Promise<void>;
  /** Starts it again on the same ports, from its nodes.conf: it rejoins with its slots, empty. */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a hung node (connections stay open, nothing is answered). */
  pause(): void;
  resume(): void;
}

export interface RedisCluster {
  nodes: RedisClusterNode[];
  /** REDIS_CLUSTER_NODES: "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3" */
  seeds: string;
  /** The master that owns `key`'s hash slot (hash tags respected). */
  nodeOf(key: string): Promise<RedisClusterNode>;
  /** The nodes that are masters now, as the first running node sees them (failed ones left out). */
  masters(): Promise<RedisClusterNode[]>;
  /** cluster_state of every running node ("ok", "fail"), by port. */
  states(): Promise<Record<number, string>>;
  /** Waits until every running node reports cluster_state:ok and knows all slots. */
  waitUntilOk(timeoutMs?: number): Promise<void>;
  /** Waits until the running nodes report cluster_state:fail (a dead master was marked FAIL). */
  waitUntilDown(timeoutMs?: number): Promise<void>;
  /** One redis-cli command on a node (the arguments as they would be typed), its output. */
  cli(node: RedisClusterNode, ...args: string[]): Promise<string>;
  /** Kills every node and removes the directory (also run by teardown). */
  stop(): Promise<void>;
}

async function poll(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

const cli = async (port: number, ...args: string[]) =>
  (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 3000 })).stdout;

/** Two free ports per node (client, bus): ephemeral ports + 10000 would often be past 65535. */
async function distinctPorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startRedisCluster(t: Teardown, options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  if (masters < 3) throw new Error('a Redis Cluster needs at least 3 masters');
  const replicasPerMaster = options.replicasPerMaster ?? 0;
  const total = masters * (1 + replicasPerMaster);
  const dir = mkdtempSync(join(tmpdir(), 'coldtrack-redis-cluster-'));
  const ports = await distinctPorts(total * 2);
  const children = new Map<number, ChildProcess>();
  let stopped = false;

  const nodes: RedisClusterNode[] = Array.from({ length: total }, (_, i) => {
    const port = ports[2 * i]!;
    const busPort = ports[2 * i + 1]!;
    const args = [
      '--port',
      String(port),
      '--cluster-port',
      String(busPort),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout',
      String(options.nodeTimeoutMs ?? 2000),
      '--cluster-require-full-coverage',
      options.requireFullCoverage === false ? 'no' : 'yes',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      '--logfile',
      '',
    ];

    async function start() {
      if (stopped) throw new Error('the Redis Cluster was stopped');
      if (children.has(port)) return;
      const child = reapOnExit(spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] }));
      children.set(port, child);
      child.once('exit', () => {
        if (children.get(port) === child) children.delete(port);
      });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await poll(
        `redis-server (cluster node) on ${port}`,
        async () => {
          if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited:\n${output}`);
          return /Ready to accept connections/.test(output);
        },
        10_000,
        20,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${output}`);
      });
    }

    async function kill() {
      const child = children.get(port);
      if (!child) return;
      const exited = waitForExit(child);
      child.kill('SIGKILL');
      await exited;
      children.delete(port);
    }

    return {
      host: '127.0.0.1' as const,
      port,
      busPort,
      address: `127.0.0.1:${port}`,
      running: () => children.has(port),
      kill,
      start,
      pause: () => void children.get(port)?.kill('SIGSTOP'),
      resume: () => void children.get(port)?.kill('SIGCONT'),
    };
  });

  async function stop() {
    if (stopped) return;
    stopped = true;
    await Promise.all(
      [...children.values()].map((child) => {
        const exited = waitForExit(child);
        child.kill('SIGCONT'); // a paused node must be able to die
        child.kill('SIGKILL');
        return exited;
      }),
    );
    children.clear();
    rmSync(dir, { recursive: true, force: true });
  }
  t.teardown(stop);

  const infoOf = async (node: RedisClusterNode) => {
    const text = await cli(node.port, 'CLUSTER', 'INFO');
    return Object.fromEntries(
      text
        .split(/\r?\n/)
        .filter((line) => line.includes(':'))
        .map((line) => line.split(':', 2) as [string, string]),
    );
  };
  const running = () => nodes.filter((node) => node.running());

  const cluster: RedisCluster = {
    nodes,
    seeds: nodes.map((node) => node.address).join(','),
    async nodeOf(key) {
      const slot = Number((await cli(nodes.find((node) => node.running())!.port, 'CLUSTER', 'KEYSLOT', key)).trim());
      // the slot ranges every master owns, as the (first running) node sees them
      const listing = await cli(running()[0]!.port, 'CLUSTER', 'NODES');
      for (const line of listing.trim().split('\n')) {
        const fields = line.trim().split(' ');
        const port = Number(fields[1]!.split('@')[0]!.split(':')[1]);
        for (const range of fields.slice(8)) {
          if (range.startsWith('[')) continue; // a slot being migrated
          const [first, last = first] = range.split('-').map(Number) as [number, number?];
          if (slot >= first && slot <= last!) return nodes.find((node) => node.port === port)!;
        }
      }
      throw new Error(`no master owns slot ${slot} (${key})`);
    },
    async states() {
      const entries = await Promise.all(
        running().map(
          async (node) =>
            [node.port, (await infoOf(node).catch(() => ({}) as Record<string, string>)).cluster_state ?? 'unanswered'] as const,
        ),
      );
      return Object.fromEntries(entries);
    },
    async masters() {
      const listing = await cli(running()[0]!.port, 'CLUSTER', 'NODES');
      const ports = listing
        .trim()
        .split('\n')
        .map((line) => line.trim().split(' '))
        .filter((fields) => fields[2]!.split(',').includes('master') && !/fail/.test(fields[2]!))
        .map((fields) => Number(fields[1]!.split('@')[0]!.split(':')[1]));
      return nodes.filter((node) => ports.includes(node.port));
    },
    async waitUntilOk(timeoutMs = 15_000) {
      await poll(
        'cluster_state:ok on every node',
        async () => {
          const infos = await Promise.all(running().map(infoOf));
          // every master running (a lost one's slots taken over by a replica counts as running)
          const servingMasters = replicasPerMaster > 0 ? (await cluster.masters()).filter((node) => node.running()).length : infos.length;
          if (
            servingMasters !== masters ||
            !infos.every(
              (info) => info.cluster_state === 'ok' && info.cluster_slots_ok === '16384' && info.cluster_known_nodes === String(total),
            )
          )
            return false;
          // a replica takes over only with data from its master: each has synced (the first full sync
          // waits repl-diskless-sync-delay, 5 s)
          const links = await Promise.all(
            running().map(async (node) => (await cli(node.port, 'INFO', 'replication')).match(/master_link_status:(\w+)/)?.[1]),
          );
          return links.every((link) => link === undefined || link === 'up');
        },
        timeoutMs,
        100,
      );
    },
    async waitUntilDown(timeoutMs = 15_000) {
      await poll(
        'cluster_state:fail on the running nodes',
        async () => {
          const infos = await Promise.all(running().map(infoOf));
          return infos.length > 0 && infos.every((info) => info.cluster_state === 'fail');
        },
        timeoutMs,
        100,
      );
    },
    cli: (node, ...args) => cli(node.port, ...args),
    stop,
  };

  try {
    await Promise.all(nodes.map((node) => node.start()));
    await run(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((node) => node.address), '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'],
      { timeout: 20_000 },
    );
    await cluster.waitUntilOk();
  } catch (error) {
    await stop();
    throw error;
  }
  return cluster;
}
