// A redis-server of a run's own on a free loopback port, saving nothing: the soak counts its
// service's Redis connections (the shared Redis holds other clusters' under the same names), and
// P7's redis-restart variant kills it and starts it again, empty, under the cluster.
import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from '../../src/free-port.js';
import { sleep, track, within } from './processes.js';

export interface PrivateRedis {
  url: string;
  version: string;
  /** SIGKILL, then the same port again: empty */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;

  /** Its version once it answers (polled every 20 ms: a restart mid-round should not stretch it). */
  async function start(): Promise<string> {
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      detached: true, // its own process group, like every child the kit tracks
      stdio: 'ignore',
    });
    track(started);
    child = started;
    for (let attempt = 0; attempt < 500 && started.exitCode === null; attempt++) {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return /redis_version:(\S+)/.exec(await probe.info('server'))?.[1] ?? 'unknown';
      } catch {
        await sleep(20);
      } finally {
        probe.disconnect();
      }
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  }

  async function kill(signal: NodeJS.Signals) {
    const running = child;
    child = null;
    if (!running) return;
    running.kill(signal);
    if (
      !(await within(
        exited(running).then(() => true),
        5000,
      ))
    )
      running.kill('SIGKILL');
  }

  const version = await start().catch(async (error: unknown) => {
    await kill('SIGKILL');
    throw error;
  });
  return {
    url,
    version,
    async restart() {
      await kill('SIGKILL');
      await start();
    },
    stop: () => kill('SIGTERM'),
  };
}
