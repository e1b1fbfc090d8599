// `npm run lint:openapi`: Redocly CLI's lint (redocly.yaml: its recommended rules) of the OpenAPI
// document the service serves, as a partner's generator would read it. The document comes from the
// real app built in process without a database (as `npm run generate:client` builds it), is written
// to .openapi/openapi.json (the file redocly.yaml names, and .redocly.lint-ignore.yaml's one
// exception refers to), then linted; arguments pass through to `redocly lint` (`-- --format json`).
// test/plugins/openapi-lint.test.ts runs it in `npm test`.
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { servedOpenApiDocument } from '../../client/codegen/generate-types.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const LINTED_DOCUMENT = fileURLToPath(new URL('../../.openapi/openapi.json', import.meta.url));
const REDOCLY_CLI = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

/** Writes the served document where redocly.yaml looks for it (whole or not at all). */
export async function writeServedDocument(document?: Record<string, unknown>): Promise<string> {
  const text = `${JSON.stringify(document ?? (await servedOpenApiDocument()), null, 2)}\n`;
  mkdirSync(new URL('../../.openapi/', import.meta.url), { recursive: true });
  // concurrent runs (a test and a developer's command) each rename a whole file into place
  const partial = `${LINTED_DOCUMENT}.${process.pid}`;
  writeFileSync(partial, text);
  renameSync(partial, LINTED_DOCUMENT);
  return LINTED_DOCUMENT;
}

export interface LintRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `redocly lint` with these arguments (none: the API redocly.yaml names), on this Node, from the
 * repository's root (where redocly.yaml and the ignore file are). Output is kept and, with
 * `echo`, shown as it comes.
 */
export function redoclyLint(args: string[], echo = false): Promise<LintRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [REDOCLY_CLI, 'lint', ...args], {
      cwd: REPO_ROOT,
      // no "new version" notice: the version is the lock file's
      env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      if (echo) process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
      if (echo) process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), stdout, stderr }));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeServedDocument();
  const { code } = await redoclyLint(process.argv.slice(2), true);
  process.exit(code);
}
