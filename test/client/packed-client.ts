// @coldtrack/client as a partner gets it: the workspace's build (client/dist/, which
// test/setup/compile.mjs writes before every run) packed by `npm pack`, and a project of the
// partner's own outside the repository (in the system's temporary directory) that installs the
// tarball. No registry is asked: the package has no dependencies.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
}

/** client/ packed into `destination` (its build must exist: compile.mjs makes it). */
export async function packClient(destination: string): Promise<PackedClient> {
  if (!existsSync(join(CLIENT_DIR, 'dist', 'index.js'))) throw new Error('client/dist is missing: node test/setup/compile.mjs builds it');
  const packed = await npm(['pack', '--json', '--pack-destination', destination], CLIENT_DIR);
  if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const [report] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
  return { tarball: join(destination, report.filename), files: report.files.map((file) => file.path) };
}

/** A partner's project in `directory` with the tarball installed; its path. */
export async function partnerProject(directory: string, tarball: string): Promise<string> {
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: 'partner', private: true, type: 'module' }));
  const installed = await npm(['install', '--offline', tarball], directory);
  if (installed.code !== 0) throw new Error(`npm install of the tarball failed: ${installed.stderr}`);
  return directory;
}
