// `npm run loadtest -- --base-url URL`: the bench's request scenarios against a running deployment
// (what it creates and revokes, the output, the exit codes: docs/operations.md). Progress on stderr,
// the table on stdout. The npm script execs this file, so a signal npm passes on reaches it.
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { cleanUp, handleInterrupts, onCleanUp, stopAll, wasInterrupted } from './kit/processes.js';
import {
  type Deployment,
  type DeploymentScenario,
  discoverUnits,
  type LoadtestContext,
  MANAGEMENT_READS_PER_SECOND,
  NO_SENSOR_HISTORY,
  probeSensorHistory,
  scenarioById,
  scopesFor,
} from './kit/loadtest-scenarios.js';
import { closeLoadGenerators } from './kit/load.js';
import { JWT_VARIABLE, type LoadtestOptions, readLoadtestOptions, USAGE, UsageError } from './kit/loadtest-options.js';
import { assembleLoadtestReport, formatLoadtestTable, writeLoadtestRecord } from './kit/loadtest-report.js';
import { runDeploymentScenarios, WARMUP_SECONDS } from './kit/loadtest-run.js';
import { LoadtestTokens, rateOfTokens, type RevocationOutcome, tokensForRate } from './kit/loadtest-tokens.js';

const refuse = (message: string): never => {
  console.error(`npm run loadtest: ${message}`);
  process.exit(2);
};

const options = ((): LoadtestOptions => {
  try {
    const read = readLoadtestOptions(process.argv.slice(2), process.env);
    if (read === 'help') {
      console.log(USAGE);
      process.exit(0);
    }
    return read;
  } catch (error) {
    if (error instanceof UsageError) return refuse(error.message);
    throw error;
  }
})();
// the load generators and any other child must not inherit the JWT
delete process.env[JWT_VARIABLE];
if (!options.yes && !process.stdin.isTTY) refuse('no terminal to confirm on: add --yes to create the tokens without asking');

const startedAt = new Date();
const loadAtStart = loadavg()[0]!;
const today = startedAt.toISOString().slice(0, 10);
const log = (line: string) => console.error(`[loadtest ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const selected: DeploymentScenario[] = options.scenarioIds.map(scenarioById);
const scopes = scopesFor(selected);
const createsTokens = options.givenTokens === null && scopes.length > 0;
const tokenCount = scopes.length === 0 ? 0 : (options.givenTokens?.length ?? tokensForRate(options.rate));
const namePrefix = `loadtest ${startedAt.toISOString().slice(0, 19)}Z #`;

let tokens: LoadtestTokens | null = null;
let revocation: RevocationOutcome | null = null;

handleInterrupts(log, 'stopping the load and revoking the tokens created');
// last word, whatever ended the run: the tokens a revocation did not reach, and how to find them
process.on('exit', () => {
  const left = tokens && tokens.count > 0 && (!revocation || revocation.failed.length > 0);
  if (left) {
    console.error(
      `npm run loadtest: tokens named "${namePrefix}..." may still be active: revoke them in the console or with ` +
        `POST /api/v1/api-tokens/{id}/revoke; they expire at ${tokens!.expiresAt.toISOString()}`,
    );
  }
});

async function revokeCreated(): Promise<void> {
  if (tokens) revocation = await tokens.revokeAll();
}

/** The deployment answers at all (/readyz is outside the rate limits); a 503 is only reported. */
async function checkReachable(): Promise<void> {
  const url = new URL(`${options.baseUrl.pathname.replace(/\/$/, '')}/readyz`, options.baseUrl);
  const answer = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch((error: Error) => {
    throw new Error(
      `the deployment at ${options.baseUrl.href} did not answer ${url.pathname}: ${error.cause instanceof Error ? error.cause.message : error.message}`,
    );
  });
  await answer.body?.cancel();
  log(
    `${options.baseUrl.href}: ${url.pathname} answered ${answer.status}${answer.ok ? '' : ' (not ready: the run goes on, its figures will say what failed)'}`,
  );
}

/**
 * A yes/no question on the terminal before the run creates tokens: anything but y or yes is no,
 * and so is Ctrl-C at the prompt. The question goes to stderr, so stdout keeps only the report.
 */
function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve) => {
    const answer = (yes: boolean) => {
      prompt.close();
      resolve(yes);
    };
    prompt.on('SIGINT', () => {
      process.stderr.write('\n');
      answer(false);
    });
    prompt.question(`${question} [y/N] `, (text) => answer(/^y(es)?$/i.test(text.trim())));
  });
}

/** What will happen, said before it does; the y/N question on a terminal. */
async function announceAndConfirm(companyId: number | null): Promise<boolean> {
  const company = companyId === null ? "the JWT's company" : `company ${companyId}`;
  const management = options.jwt !== null && selected.some((scenario) => scenario.id === 'management');
  const lines = [
    `plan: ${selected.map((scenario) => scenario.id).join(', ')} against ${options.baseUrl.href}`,
    `  each at ${options.rate} requests/s for ${options.seconds} s after a ${WARMUP_SECONDS} s warm-up, over ${options.connections} connections`,
  ];
  if (createsTokens) {
    lines.push(
      `  creates ${tokenCount} API tokens in ${company} (scopes ${scopes.join(', ')}), named "${namePrefix}1..${tokenCount}", ` +
        `expiring in a day; ${((options.rate * 60) / tokenCount).toFixed(0)} requests a minute each; all revoked at the end`,
    );
    if (tokenCount > 100)
      lines.push(
        `  creating and revoking them takes about ${Math.ceil((2 * tokenCount) / 120)} minutes (an employee may write 120 times a minute)`,
      );
  } else if (options.givenTokens) {
    lines.push(`  uses the ${tokenCount} tokens of --tokens-file as given (none created or revoked)`);
    if (rateOfTokens(tokenCount) < options.rate) {
      lines.push(
        `  WARNING: ${tokenCount} tokens may send ${rateOfTokens(tokenCount).toFixed(1)} requests/s between them: --rate ${options.rate} will draw 429s`,
      );
    }
  }
  if (management)
    lines.push(
      `  management reads with the employee's JWT at ${Math.min(options.rate, MANAGEMENT_READS_PER_SECOND)} requests/s (its 600 reads a minute)`,
    );
  for (const line of lines) log(line);
  if (options.yes) return true;
  return confirm(createsTokens ? `Create ${tokenCount} tokens in ${company} and run?` : 'Run?');
}

/** The JWT must outlive the run: the revocation needs it. */
function checkJwtLifetime() {
  if (!options.jwtExpiresAt || !createsTokens) return;
  const writesMs = Math.ceil((2 * tokenCount) / 120) * 60_000;
  const runMs = selected.length * (options.seconds + WARMUP_SECONDS + 5) * 1000;
  const endsBy = Date.now() + writesMs + runMs + 60_000;
  if (options.jwtExpiresAt.getTime() < endsBy) {
    refuse(
      `the JWT expires at ${options.jwtExpiresAt.toISOString()}, before the run would end and revoke its tokens (about ${new Date(endsBy).toISOString()}): sign in again`,
    );
  }
}

async function main(): Promise<number> {
  onCleanUp(revokeCreated); // the clean-up runs its steps in reverse: the load stops first
  onCleanUp(() => stopAll());
  onCleanUp(async () => closeLoadGenerators());
  await checkReachable();
  const units = options.jwt ? await discoverUnits(options.baseUrl, options.jwt) : null;
  if (units) log(`company ${units.companyId}: ${units.unitIds.length} live cooling units`);
  checkJwtLifetime();
  if (!(await announceAndConfirm(units?.companyId ?? null))) {
    log('cancelled: nothing was created');
    return 1;
  }

  let raw: string[] = options.givenTokens ?? [];
  if (createsTokens) {
    tokens = new LoadtestTokens(options.baseUrl, options.jwt!, namePrefix, log, startedAt);
    log(`creating ${tokenCount} tokens`);
    raw = await tokens.create(tokenCount, scopes);
  }
  const deployment: Deployment = { today, companyId: units?.companyId ?? null, unitIds: units?.unitIds ?? [], sensor: NO_SENSOR_HISTORY };
  if (selected.some((scenario) => scenario.readsSensor !== 'never') && raw.length > 0) {
    deployment.sensor = await probeSensorHistory(options.baseUrl, raw[0]!, today);
    const { sensor } = deployment;
    log(
      sensor.available
        ? `sensor history: ${sensor.firstDay} to ${sensor.lastDay}, ${sensor.units.length} units on its last full day, ${sensor.deepPages} raw pages of 1,000 in its last year`
        : `sensor history: ${sensor.reason}`,
    );
  }

  const context: LoadtestContext = {
    deployment,
    tokens: raw,
    jwt: options.jwt,
    rate: options.rate,
    seconds: options.seconds,
    connections: options.connections,
    pathPrefix: options.baseUrl.pathname.replace(/\/$/, ''),
  };
  const scenarios = await runDeploymentScenarios(selected, context, { origin: options.baseUrl.origin, interrupted: wasInterrupted, log });
  await revokeCreated();

  const report = assembleLoadtestReport({
    startedAt,
    loadAtStart,
    baseUrl: options.baseUrl,
    plan: { rate: options.rate, seconds: options.seconds, connections: options.connections, scenarios: options.scenarioIds },
    deployment,
    tokens: {
      source: createsTokens ? 'created' : options.givenTokens ? 'file' : 'none',
      count: tokenCount,
      scopes,
      created: tokens,
      revocation,
    },
    scenarios,
  });
  console.log(formatLoadtestTable(report));
  console.log(`\nrecord: ${writeLoadtestRecord(report, options.outDir)} (this run's line appended)`);
  return report.tokens.leftActive.length > 0 ? 1 : 0;
}

try {
  const code = await main();
  await cleanUp(log);
  log('done');
  process.exitCode = code;
} catch (error) {
  if (wasInterrupted()) log('stopped: interrupted, nothing reported');
  else log(`failed: ${error instanceof Error ? error.message : String(error)}`);
  await cleanUp(log);
  process.exitCode = 1;
}
