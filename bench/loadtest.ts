// `npm run loadtest -- --base-url URL`: the bench's request scenarios against a running deployment
// (what it creates and revokes, the output, the exit codes: docs/operations.md). Progress on stderr,
// the table on stdout. The npm script execs this file, so a signal npm passes on reaches it.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { closeLoadGenerators, runDealtLoad } from './kit/load.js';
import { type Deployment, discoverUnits, LoadtestTokens, NO_SENSOR_HISTORY, probeSensorHistory } from './kit/loadtest-deployment.js';
import {
  DEPLOYMENT_SCENARIOS,
  JWT_VARIABLE,
  type LoadtestContext,
  type LoadtestLoad,
  type LoadtestOptions,
  MANAGEMENT_READS_PER_SECOND,
  rateOfTokens,
  readLoadtestOptions,
  scopesFor,
  tokensForRate,
  USAGE,
  UsageError,
  WARMUP_SECONDS,
} from './kit/loadtest-plan.js';
import { assembleLoadtestReport, formatLoadtestTable, type LoadtestScenarioResult, loadResult } from './kit/loadtest-report.js';
import { cleanUp, handleInterrupts, onCleanUp, stopAll, wasInterrupted } from './kit/processes.js';
import { appendRecord } from './kit/run-record.js';
import { ms } from './kit/statistics.js';

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
const selected = DEPLOYMENT_SCENARIOS.filter((scenario) => options.scenarioIds.includes(scenario.id));
const scopes = scopesFor(selected);
const createsTokens = options.givenTokens === null && scopes.length > 0;
const tokenCount = scopes.length === 0 ? 0 : (options.givenTokens?.length ?? tokensForRate(options.rate));
const namePrefix = `loadtest ${startedAt.toISOString().slice(0, 19)}Z #`;
const pathPrefix = options.baseUrl.pathname.replace(/\/$/, '');

let tokens: LoadtestTokens | null = null;

handleInterrupts(log, 'stopping the load and revoking the tokens created');
// last word, whatever ended the run: the tokens a revocation did not reach, and how to find them
process.on('exit', () => {
  if (tokens && tokens.count > 0 && (!tokens.outcome || tokens.outcome.failed.length > 0)) {
    console.error(
      `npm run loadtest: tokens named "${namePrefix}..." may still be active: revoke them in the console or with ` +
        `POST /api/v1/api-tokens/{id}/revoke; they expire at ${tokens.expiresAt.toISOString()}`,
    );
  }
});

async function revokeCreated(): Promise<void> {
  await tokens?.revokeAll();
}

/** The deployment answers at all (/readyz is outside the rate limits); a 503 is only reported. */
async function checkReachable(): Promise<void> {
  const url = new URL(`${pathPrefix}/readyz`, options.baseUrl);
  const answer = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch((error: Error) => {
    const why = error.cause instanceof Error ? error.cause.message : error.message;
    throw new Error(`the deployment at ${options.baseUrl.href} did not answer ${url.pathname}: ${why}`);
  });
  await answer.body?.cancel();
  const notReady = answer.ok ? '' : ' (not ready: the run goes on, its figures will say what failed)';
  log(`${options.baseUrl.href}: ${url.pathname} answered ${answer.status}${notReady}`);
}

/**
 * A yes/no question on the terminal before the run creates tokens: anything but y or yes is no,
 * and so is Ctrl-C at the prompt. The question goes to stderr, so stdout keeps only the report.
 */
async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  const cancel = new AbortController();
  prompt.on('SIGINT', () => {
    process.stderr.write('\n');
    cancel.abort();
  });
  const answer = await prompt.question(`${question} [y/N] `, { signal: cancel.signal }).catch(() => '');
  prompt.close();
  return /^y(es)?$/i.test(answer.trim());
}

/** What will happen, said before it does; the y/N question on a terminal. */
async function announceAndConfirm(companyId: number | null): Promise<boolean> {
  const company = companyId === null ? "the JWT's company" : `company ${companyId}`;
  const { rate, seconds, connections, givenTokens } = options;
  log(`plan: ${options.scenarioIds.join(', ')} against ${options.baseUrl.href}`);
  log(`  each at ${rate} requests/s for ${seconds} s after a ${WARMUP_SECONDS} s warm-up, over ${connections} connections`);
  if (createsTokens) {
    log(
      `  creates ${tokenCount} API tokens in ${company} (scopes ${scopes.join(', ')}), named "${namePrefix}1..${tokenCount}", ` +
        `expiring in a day; ${((rate * 60) / tokenCount).toFixed(0)} requests a minute each; all revoked at the end`,
    );
    const minutes = Math.ceil((2 * tokenCount) / 120);
    if (tokenCount > 100) log(`  creating and revoking them takes about ${minutes} minutes (an employee may write 120 times a minute)`);
  } else if (givenTokens) {
    log(`  uses the ${tokenCount} tokens of --tokens-file as given (none created or revoked)`);
    const carried = rateOfTokens(tokenCount);
    if (carried < rate)
      log(`  WARNING: ${tokenCount} tokens may send ${carried.toFixed(1)} requests/s between them: --rate ${rate} will draw 429s`);
  }
  if (options.jwt !== null && options.scenarioIds.includes('management')) {
    const reads = Math.min(rate, MANAGEMENT_READS_PER_SECOND);
    log(`  management reads with the employee's JWT at ${reads} requests/s (its 600 reads a minute)`);
  }
  if (options.yes) return true;
  return confirm(createsTokens ? `Create ${tokenCount} tokens in ${company} and run?` : 'Run?');
}

/** The JWT must outlive the run: the revocation needs it. */
function checkJwtLifetime() {
  if (!options.jwtExpiresAt || !createsTokens) return;
  const writesMs = Math.ceil((2 * tokenCount) / 120) * 60_000;
  const runMs = selected.length * (options.seconds + WARMUP_SECONDS + 5) * 1000;
  const endsBy = new Date(Date.now() + writesMs + runMs + 60_000);
  if (options.jwtExpiresAt < endsBy) {
    refuse(
      `the JWT expires at ${options.jwtExpiresAt.toISOString()}, before the run would end and revoke its tokens (about ${endsBy.toISOString()}): sign in again`,
    );
  }
}

/**
 * The scenarios one after another, each load a warm-up then its measured run at its steady rate.
 * The tokens are dealt in one rotation across every load, each run starting after the last token
 * the previous one dealt, so no token gets more than its share.
 */
async function runScenarios(context: LoadtestContext): Promise<LoadtestScenarioResult[]> {
  let nextToken = 0;
  const run = async (load: LoadtestLoad, seconds: number) => {
    const rotating = load.credentials === 'tokens';
    const { connections, rate: overallRate, requests } = load;
    const firstEntry = rotating ? nextToken : 0;
    const { figures, dealt } = await runDealtLoad({
      url: options.baseUrl.origin,
      connections,
      duration: seconds,
      overallRate,
      requests,
      firstEntry,
    });
    if (rotating) nextToken = (nextToken + dealt) % context.tokens.length;
    return figures;
  };
  const results: LoadtestScenarioResult[] = [];
  for (const scenario of selected) {
    if (wasInterrupted()) throw new Error('interrupted');
    const { id, title, what } = scenario;
    const reason = scenario.unavailable(context);
    if (reason) log(`${id}: ${reason}`);
    const result: LoadtestScenarioResult = { id, title, what, status: reason ? 'not measured' : 'measured', reason, loads: [] };
    results.push(result);
    for (const load of reason ? [] : scenario.build(context)) {
      if (wasInterrupted()) throw new Error('interrupted');
      log(`${id}: ${load.label}, ${load.rate}/s over ${load.connections} connections, ${WARMUP_SECONDS} s warm-up then ${load.seconds} s`);
      await run(load, WARMUP_SECONDS);
      const measured = loadResult(load, await run(load, load.seconds));
      result.loads.push(measured);
      const { figures, rateLimited, otherNon2xx } = measured;
      log(
        `  ${figures.okPerS.toFixed(1)} 2xx/s, p50 ${ms(figures.latencyMs.p50)} ms, p97.5 ${ms(figures.latencyMs.p97_5)} ms, p99 ${ms(figures.latencyMs.p99)} ms; ` +
          `429: ${rateLimited}, other non-2xx: ${JSON.stringify(otherNon2xx)}, errors: ${figures.errors}`,
      );
    }
  }
  return results;
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
  if (scopes.includes('sensor_data') && raw.length > 0) {
    deployment.sensor = await probeSensorHistory(options.baseUrl, raw[0]!, today);
    const { sensor } = deployment;
    log(
      sensor.available
        ? `sensor history: ${sensor.firstDay} to ${sensor.lastDay}, ${sensor.units.length} units on its last full day, ${sensor.deepPages} raw pages of 1,000 in its last year`
        : `sensor history: ${sensor.reason}`,
    );
  }

  const { jwt, rate, seconds, connections } = options;
  const scenarios = await runScenarios({ deployment, tokens: raw, jwt, rate, seconds, connections, pathPrefix });
  await revokeCreated();

  const used = { count: tokenCount, scopes, created: tokens };
  const report = assembleLoadtestReport({ startedAt, loadAtStart, options, deployment, scenarios, tokens: used });
  console.log(formatLoadtestTable(report));
  const runs = join(options.outDir, 'runs.jsonl');
  appendRecord(runs, report);
  console.log(`\nrecord: ${runs} (this run's line appended)`);
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
