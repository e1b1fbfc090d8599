// Starts the real server (src/main.ts) as a child process on a free port, for tests that need
// a second process: cross-process revocation, cluster behaviour, signals.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { reapOnExit } from './reaper.js';
import { nodeArgs } from './entry.js';

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function startServerProcess(t: Teardown, env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = reapOnExit(
    spawn(process.execPath, nodeArgs('src/main.ts'), {
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        WORKERS: '1',
        // its own Redis key space: counters of other test runs on the shared Redis can't interfere
        REDIS_KEY_PREFIX: `coldtrack-test-${randomBytes(4).toString('hex')}:`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), timeoutMs);
    const check = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => reject(new Error(`server exited early:\n${output}`)));
  });

  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null) child.kill(signal);
    return exited;
  };
  t.teardown(() => stop('SIGKILL'));
  return { child, baseUrl, output: () => output, stop };
}
