// The command line of `npm run loadtest` (bench/loadtest.ts), checked: a UsageError names the
// first problem in one line and never repeats a secret. The employee JWT comes from a file or
// COLDTRACK_EMPLOYEE_JWT, API tokens from a file: never from an argument, which would stay in `ps`
// and the shell history.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { decodeJwt } from 'jose';
import { isWellFormedToken } from '../../src/tokens/format.js';
import { DEPLOYMENT_SCENARIOS, NOT_AGAINST_A_DEPLOYMENT } from './loadtest-scenarios.js';
import { repoRoot } from './checkout.js';

export const JWT_VARIABLE = 'COLDTRACK_EMPLOYEE_JWT';

export const USAGE = `usage: ${JWT_VARIABLE}=... npm run loadtest -- --base-url URL [options]
       npm run loadtest -- --base-url URL --jwt-file PATH [options]
       npm run loadtest -- --base-url URL --tokens-file PATH [options]
  --base-url URL      the deployment, e.g. https://staging.coldtrack.example (required)
  --jwt-file PATH     a file holding a Registered Employee's JWT (else ${JWT_VARIABLE}): the
                      loadtest creates the API tokens it needs in that employee's company and
                      revokes them at the end
  --tokens-file PATH  API tokens, one a line, used as given (none created or revoked)
  --rate N            requests a second across all tokens, each scenario (default 50)
  --duration S        seconds measured per scenario (default 30), after a 1-second warm-up
  --scenarios a,b     a subset of: ${DEPLOYMENT_SCENARIOS.map((scenario) => scenario.id).join(', ')} (default all)
  --connections N     concurrent connections (default: the rate, at most 100)
  --out DIR           the report's folder (default bench/results)
  --yes               do not ask before creating tokens (required without a terminal)
Neither the JWT nor a token is ever taken from the command line. Ctrl-C, or SIGTERM or SIGINT to
npm's process (a supervisor, a CI timeout), stops the load and revokes the tokens created.`;

export class UsageError extends Error {}

export interface LoadtestOptions {
  baseUrl: URL;
  /** the employee's JWT (token management, unit discovery, the management scenario); null: none given */
  jwt: string | null;
  /** when the JWT expires (its exp claim); null: no JWT, or none said */
  jwtExpiresAt: Date | null;
  /** API tokens from --tokens-file, used as given; null: the loadtest creates its own */
  givenTokens: string[] | null;
  /** requests a second across all tokens, each scenario */
  rate: number;
  /** measured seconds per scenario */
  seconds: number;
  scenarioIds: string[];
  connections: number;
  outDir: string;
  yes: boolean;
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;
/** Something that looks like a credential: a JWT or an API token. */
const looksSecret = (text: string) => /eyJ[\w-]{8,}\.[\w-]+/.test(text) || /ctk_[0-9A-Za-z]{8,}/.test(text);

function wholeNumber(name: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max)
    throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
  return Number(text);
}

function readSecretFile(option: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the ${option} file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The JWT, its shape and expiry checked (not its signature: the deployment does that). */
function checkedJwt(jwt: string, from: string, now: Date): { jwt: string; expiresAt: Date | null } {
  if (!JWT_SHAPE.test(jwt)) throw new UsageError(`${from} does not hold a JWT (three base64url parts separated by dots)`);
  let expiresAt: number | undefined;
  try {
    expiresAt = decodeJwt(jwt).exp;
  } catch {
    throw new UsageError(`${from} does not hold a readable JWT`);
  }
  if (expiresAt !== undefined && expiresAt * 1000 <= now.getTime()) {
    throw new UsageError(`the JWT in ${from} expired at ${new Date(expiresAt * 1000).toISOString()}: sign in again`);
  }
  return { jwt, expiresAt: expiresAt === undefined ? null : new Date(expiresAt * 1000) };
}

function tokensFrom(path: string): string[] {
  const tokens: string[] = [];
  readSecretFile('--tokens-file', path)
    .split('\n')
    .forEach((line, index) => {
      const token = line.trim();
      if (token === '' || token.startsWith('#')) return;
      if (!isWellFormedToken(token)) throw new UsageError(`line ${index + 1} of the --tokens-file is not an API token (ctk_...)`);
      tokens.push(token);
    });
  if (tokens.length === 0) throw new UsageError('the --tokens-file holds no API token');
  return tokens;
}

function scenarioIdsOf(text: string | undefined): string[] {
  const known = DEPLOYMENT_SCENARIOS.map((scenario) => scenario.id);
  if (text === undefined) return known;
  const ids = [
    ...new Set(
      text
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    ),
  ];
  if (ids.length === 0) throw new UsageError(`--scenarios names none of: ${known.join(', ')}`);
  for (const id of ids) {
    const why = NOT_AGAINST_A_DEPLOYMENT[id];
    if (why) throw new UsageError(`--scenarios: ${id} is not run against a deployment (${why})`);
    if (!known.includes(id)) throw new UsageError(`--scenarios: unknown scenario ${JSON.stringify(id)}; known: ${known.join(', ')}`);
  }
  // in the bench's order, whatever the order asked
  return known.filter((id) => ids.includes(id));
}

/** The arguments and the environment, checked; 'help' for --help. */
export function readLoadtestOptions(argv: string[], env: NodeJS.ProcessEnv, now = new Date()): LoadtestOptions | 'help' {
  if (argv.some((argument) => /^--?(jwt|token|tokens|api-token|employee-jwt)(=|$)/.test(argument))) {
    throw new UsageError(
      `the JWT and tokens are never taken as arguments (they would stay in ps and the shell history): use --jwt-file PATH, ${JWT_VARIABLE} or --tokens-file PATH`,
    );
  }
  if (argv.some(looksSecret)) {
    throw new UsageError(
      `an argument looks like a JWT or an API token: pass it in a file (--jwt-file, --tokens-file) or ${JWT_VARIABLE}, never on the command line`,
    );
  }
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        'base-url': { type: 'string' },
        'jwt-file': { type: 'string' },
        'tokens-file': { type: 'string' },
        rate: { type: 'string' },
        duration: { type: 'string' },
        scenarios: { type: 'string' },
        connections: { type: 'string' },
        out: { type: 'string' },
        yes: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!);
  }
  if (values.help) return 'help';
  // not repeated: it may be a secret in the wrong place
  if (positionals.length > 0) throw new UsageError(`${positionals.length} unexpected argument(s) without an option name (see --help)`);
  if (!values['base-url'])
    throw new UsageError('--base-url URL is required: the deployment to load-test, e.g. https://staging.coldtrack.example');
  let baseUrl: URL;
  try {
    baseUrl = new URL(values['base-url']);
  } catch {
    throw new UsageError('--base-url must be an http:// or https:// URL');
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw new UsageError('--base-url must be an http:// or https:// URL');
  if (baseUrl.username || baseUrl.password) throw new UsageError('--base-url must not carry a user name or password');
  if (baseUrl.search || baseUrl.hash) throw new UsageError('--base-url must not carry a query or a fragment');

  const jwtFile = values['jwt-file'];
  const employee =
    jwtFile !== undefined
      ? checkedJwt(readSecretFile('--jwt-file', jwtFile).trim(), 'the --jwt-file', now)
      : env[JWT_VARIABLE]
        ? checkedJwt(env[JWT_VARIABLE].trim(), JWT_VARIABLE, now)
        : null;
  const givenTokens = values['tokens-file'] !== undefined ? tokensFrom(values['tokens-file']) : null;
  if (!employee && !givenTokens) {
    throw new UsageError(
      `an employee JWT is needed to create the tokens: --jwt-file PATH or ${JWT_VARIABLE} (or --tokens-file PATH with API tokens to use as given)`,
    );
  }
  const rate = wholeNumber('rate', values.rate, 50, 10_000);
  return {
    baseUrl,
    jwt: employee?.jwt ?? null,
    jwtExpiresAt: employee?.expiresAt ?? null,
    givenTokens,
    rate,
    seconds: wholeNumber('duration', values.duration, 30, 3600),
    scenarioIds: scenarioIdsOf(values.scenarios),
    connections: wholeNumber('connections', values.connections, Math.min(rate, 100), 1000),
    outDir: values.out !== undefined ? resolve(values.out) : join(repoRoot, 'bench/results'),
    yes: values.yes,
  };
}
