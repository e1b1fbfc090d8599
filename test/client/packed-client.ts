// @coldtrack/client as a partner gets it: packed by `npm pack` from a clone that never built it
// (a copy of client/ without dist/, beside the root's node_modules as `npm ci` leaves them), whose
// prepack script builds it, and a project of the partner's own outside the repository (in the
// system's temporary directory) that installs the tarball. The copy, not client/ itself: the
// suite's other files load client/dist/ meanwhile. No registry is asked: the package has no
// dependencies.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLIENT_DIR = join(REPO_ROOT, 'client');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string>;
  timeout?: number;
}

/** A command's exit code and output, with `npm test`'s npm_* settings kept from the inner npm. */
export function run(command: string, args: string[], cwd: string, options: RunOptions = {}): Promise<Run> {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))), ...options.env };
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: options.timeout ?? 150_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

export const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], cwd);

export interface PackedClient {
  tarball: string;
  /** the tarball's files, as `npm pack --json` lists them (paths inside the package) */
  files: string[];
  /** whether the clone held a build (dist/) when `npm pack` started: it must not */
  builtBeforePack: boolean;
}

/** A clone's client/ holds none of these: the build (and build.mjs's dist.next/, dist.old/), installs. */
const NOT_IN_A_CLONE = /^(dist|dist\..*|node_modules)$/;

/** client/ as a fresh clone has it, in `destination`/clone/, packed into `destination`. */
export async function packClient(destination: string): Promise<PackedClient> {
  const clone = join(destination, 'clone');
  const client = join(clone, 'client');
  cpSync(CLIENT_DIR, client, {
    recursive: true,
    filter: (path) => !NOT_IN_A_CLONE.test(relative(CLIENT_DIR, path).split(sep)[0] ?? ''),
  });
  // the build's tsc and @types/node are the root's devDependencies
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  // as after a version raised in package.json and no build since: the build must write it again
  writeFileSync(
    join(client, 'src', 'version.ts'),
    "export const CLIENT_VERSION = '0.0.0-stale';\nexport const DEFAULT_USER_AGENT = 'stale';\n",
  );
  const builtBeforePack = existsSync(join(client, 'dist'));
  const packed = await npm(['pack', '--json', '--pack-destination', destination], client);
  if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const [report] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
  return { tarball: join(destination, report.filename), files: report.files.map((file) => file.path), builtBeforePack };
}

export interface AgentRecorder {
  url: string;
  /** every request so far: its path with the query, and its User-Agent header */
  readonly requests: readonly { path: string; userAgent: string | undefined }[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that notes what each request says it is and refuses it as the service
 * refuses a bad token (401, never retried), so a client or the command stops at its first request.
 */
export async function agentRecorder(): Promise<AgentRecorder> {
  const requests: { path: string; userAgent: string | undefined }[] = [];
  const server = http.createServer((request, response) => {
    requests.push({ path: request.url ?? '', userAgent: request.headers['user-agent'] });
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { code: 'unauthorized', message: 'not a token of this recorder' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A partner's project in `directory` with the tarball installed; its path. */
export async function partnerProject(directory: string, tarball: string): Promise<string> {
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: 'partner', private: true, type: 'module' }));
  const installed = await npm(['install', '--offline', tarball], directory);
  if (installed.code !== 0) throw new Error(`npm install of the tarball failed: ${installed.stderr}`);
  return directory;
}
