// Runs `npm run export`'s script (client/src/cli/export.ts, the package's coldtrack-export) as a child process, as a partner would, with
// the token in COLDTRACK_TOKEN, against the world's service through a counting HTTP relay: every
// request the command makes is counted (and can be answered by the test instead).
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeArgs } from '../helpers/entry.js';

export interface ExportRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  stdout: string;
  /** HTTP requests that reached the service */
  requests: number;
  /** their answers' statuses */
  statuses: number[];
}

export interface RunOptions {
  token?: string | null;
  env?: Record<string, string>;
  /** called with the child once it runs (to kill it) and each stderr chunk */
  onStderr?: (text: string, child: ChildProcess) => void;
}

export interface Relay {
  url: string;
  /** requests relayed so far */
  readonly requests: number;
  /** the status of every answer relayed so far, in order */
  readonly statuses: readonly number[];
  close(): Promise<void>;
}

/** A relay to `target` counting requests; close it when done. */
export async function countingRelay(target: string): Promise<Relay> {
  const upstream = new URL(target);
  let requests = 0;
  const statuses: number[] = [];
  const server = http.createServer((request, response) => {
    requests++;
    const forwarded = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        statuses.push(answer.statusCode ?? 0);
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    // the client gone mid-answer: the service sees its connection close, as it would without the relay
    response.on('close', () => response.writableFinished || forwarded.destroy());
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    get statuses() {
      return statuses;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The command against `world.relay` (the same base URL every run, as a partner's would be). */
export async function runExport(world: { relay: Relay; token: string }, args: string[], options: RunOptions = {}): Promise<ExportRun> {
  const { relay } = world;
  const before = relay.requests;
  const answered = relay.statuses.length;
  {
    const token = options.token === undefined ? world.token : options.token;
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...options.env };
    delete env.COLDTRACK_TOKEN;
    if (token !== null) env.COLDTRACK_TOKEN = token;
    const child = spawn(process.execPath, [...nodeArgs('client/src/cli/export.ts'), '--base-url', relay.url, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      options.onStderr?.(stderr, child);
    });
    // 'close', not 'exit': under load a child's last stderr line can still be in the pipe when it exits
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (c, s) => resolve([c, s])),
    );
    return { code, signal, stderr, stdout, requests: relay.requests - before, statuses: relay.statuses.slice(answered) };
  }
}
