// How the CLI commands find the database of a running `npm start` when DATABASE_URL is unset: the
// embedded mode writes its URL to DATA_DIR/running.json (owner-only) while it runs and removes it
// when it stops; a command reads it, and the JWT secret the demo signs with from embedded.json. A
// file left by a killed run names a pid that is gone, and is ignored.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const RUNNING_FILE = 'running.json';

interface Running {
  url: string;
  pid: number;
}

export function announceRunning(dataDir: string, url: string): void {
  writeFileSync(join(resolve(dataDir), RUNNING_FILE), JSON.stringify({ url, pid: process.pid } satisfies Running), { mode: 0o600 });
}

export function withdrawRunning(dataDir: string): void {
  rmSync(join(resolve(dataDir), RUNNING_FILE), { force: true });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The URL of the embedded database a running `npm start` serves from dataDir, or null. */
export function runningEmbeddedUrl(dataDir: string): string | null {
  const file = join(resolve(dataDir), RUNNING_FILE);
  if (!existsSync(file)) return null;
  try {
    const running = JSON.parse(readFileSync(file, 'utf8')) as Running;
    return typeof running.url === 'string' && Number.isInteger(running.pid) && alive(running.pid) ? running.url : null;
  } catch {
    return null;
  }
}

/** The JWT secret the embedded demo signs with (kept in dataDir/embedded.json), or null. */
export function embeddedJwtSecret(dataDir: string): string | null {
  try {
    const state = JSON.parse(readFileSync(join(resolve(dataDir), 'embedded.json'), 'utf8')) as { jwtSecret?: unknown };
    return typeof state.jwtSecret === 'string' ? state.jwtSecret : null;
  } catch {
    return null;
  }
}

export const dataDirOf = (env: NodeJS.ProcessEnv = process.env) => env.DATA_DIR?.trim() || '.data';

/**
 * DATABASE_URL for a CLI command: the environment's, else the running `npm start`'s embedded
 * database (one line on stderr says so), else null with the line to print.
 */
export function commandDatabase(
  command: string,
  log: (line: string) => void = (line) => console.error(line),
): { url: string } | { problem: string } {
  const given = process.env.DATABASE_URL?.trim();
  if (given) return { url: given };
  const dataDir = dataDirOf();
  const url = runningEmbeddedUrl(dataDir);
  if (url) {
    log(`DATABASE_URL is not set: using the embedded database of the running npm start (${dataDir})`);
    return { url };
  }
  return {
    problem: `Invalid configuration: DATABASE_URL is required for ${command} (or start the embedded demo with npm start first: ${command} then finds its database)`,
  };
}
