// `npm run loadtest -- --base-url URL`: the bench's request scenarios against a running deployment
// (docs/operations.md). Progress on stderr, the table on stdout. The npm script execs this file,
// so a signal npm passes on reaches it.
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
  readLoadtestOptions,
  scopesFor,
  tokensForRate,
  USAGE,
  UsageError,
  WARMUP_SECONDS,
} from './kit/loadtest-plan.js';
import { assembleLoadtestReport, type LoadtestScenarioResult, loadResult } from './kit/loadtest-report.js';
import { cleanUp, handleInterrupts, onCleanUp, stopAll, wasInterrupted } from './kit/processes.js';
import { formatLoadtestTable } from './kit/report.js';
import { appendRecord } from './kit/run-record.js';
import { ms } from './kit/statistics.js';

const refuse = (message: string): never => {
  console.error(`npm run loadtest: ${message}`);
  process.exit(2);
};

const options = ((): LoadtestOptions => {
  try {
    const read = readLoadtestOptions(process.argv.slice(2), process.env);
    if (read !== 'help') return read;
    console.log(USAGE);
    process.exit(0);
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
const log = (line: string) => console.error(`[loadtest ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const selected = DEPLOYMENT_SCENARIOS.filter((scenario) => options.scenarioIds.includes(scenario.id));
const scopes = scopesFor(selected);
const createsTokens = options.givenTokens === null && scopes.length > 0;
const tokenCount = scopes.length === 0 ? 0 : (options.givenTokens?.length ?? tokensForRate(options.rate));
/** creating and revoking them, at an employee's 120 writes a minute */
const writeMinutes = Math.ceil((2 * tokenCount) / 120);
const namePrefix = `loadtest ${startedAt.toISOString().slice(0, 19)}Z #`;
let tokens: LoadtestTokens | null = null;

handleInterrupts(log, 'stopping the load and revoking the tokens created');
// the last word, whatever ended the run (a second Ctrl-C too): the tokens the revocation did not reach
process.on('exit', () => {
  if (tokens && tokens.count > 0 && (!tokens.outcome || tokens.outcome.failed.length > 0)) {
    console.error(
      `npm run loadtest: tokens named "${namePrefix}..." may still be active: revoke them in the console or with ` +
        `POST /api/v1/api-tokens/{id}/revoke; they expire at ${tokens.expiresAt.toISOString()}`,
    );
  }
});

/** y/N on the terminal (stderr, so stdout keeps only the report): anything but y or yes is no, Ctrl-C too. */
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

/** What the run will do, said before it does, and asked unless --yes. */
async function announceAndConfirm(companyId: number | null): Promise<boolean> {
  const company = companyId === null ? "the JWT's company" : `company ${companyId}`;
  const { rate, seconds, connections } = options;
  log(`plan: ${options.scenarioIds.join(', ')} against ${options.baseUrl.href}`);
  log(`  each at ${rate} requests/s for ${seconds} s after a ${WARMUP_SECONDS} s warm-up, over ${connections} connections`);
  if (createsTokens) {
    log(
      `  creates ${tokenCount} API tokens in ${company} (scopes ${scopes.join(', ')}), named "${namePrefix}1..${tokenCount}", ` +
        `expiring in a day; ${((rate * 60) / tokenCount).toFixed(0)} requests a minute each; all revoked at the end`,
    );
    if (tokenCount > 100)
      log(`  creating and revoking them takes about ${writeMinutes} minutes (an employee may write 120 times a minute)`);
  } else if (options.givenTokens) log(`  uses the ${tokenCount} tokens of --tokens-file as given (none created or revoked)`);
  return options.yes || confirm(createsTokens ? `Create ${tokenCount} tokens in ${company} and run?` : 'Run?');
}

/** Refuses a JWT that would expire before the run ends: the revocation needs it. */
function checkJwtLifetime() {
  if (!options.jwtExpiresAt || !createsTokens) return;
  const endsBy = new Date(Date.now() + (writeMinutes + 1) * 60_000 + selected.length * (options.seconds + WARMUP_SECONDS + 5) * 1000);
  if (options.jwtExpiresAt < endsBy) {
    const expiry = options.jwtExpiresAt.toISOString();
    refuse(`the JWT expires at ${expiry}, before the run would end and revoke its tokens (about ${endsBy.toISOString()}): sign in again`);
  }
}

/**
 * The scenarios one after another, each load a warm-up then its measured run at its steady rate.
 * The token loads deal one rotation of the tokens between them, each starting after the last token
 * the previous one dealt, so no token gets more than its share.
 */
async function runScenarios(context: LoadtestContext): Promise<LoadtestScenarioResult[]> {
  let nextToken = 0;
  const run = async ({ connections, rate, requests, credentials }: LoadtestLoad, duration: number) => {
    const firstEntry = credentials === 'tokens' ? nextToken : 0;
    const { figures, dealt } = await runDealtLoad({
      url: options.baseUrl.origin,
      connections,
      duration,
      overallRate: rate,
      requests,
      firstEntry,
    });
    if (credentials === 'tokens') nextToken = (nextToken + dealt) % context.tokens.length;
    return figures;
  };
  const results: LoadtestScenarioResult[] = [];
  for (const scenario of selected) {
    const { id, title } = scenario;
    const reason = scenario.unavailable(context);
    if (reason) log(`${id}: ${reason}`);
    const result: LoadtestScenarioResult = { id, title, status: reason ? 'not measured' : 'measured', reason, loads: [] };
    results.push(result);
    for (const load of reason ? [] : scenario.build(context)) {
      if (wasInterrupted()) throw new Error('interrupted');
      log(`${id}: ${load.label}, ${load.rate}/s over ${load.connections} connections, ${WARMUP_SECONDS} s warm-up then ${load.seconds} s`);
      await run(load, WARMUP_SECONDS);
      const measured = loadResult(load, await run(load, load.seconds));
      result.loads.push(measured);
      const { okPerS, latencyMs, errors } = measured.figures;
      log(
        `  ${okPerS.toFixed(1)} 2xx/s, p50 ${ms(latencyMs.p50)} ms, p97.5 ${ms(latencyMs.p97_5)} ms, p99 ${ms(latencyMs.p99)} ms; ` +
          `429: ${measured.rateLimited}, other non-2xx: ${JSON.stringify(measured.otherNon2xx)}, errors: ${errors}`,
      );
    }
  }
  return results;
}

async function main(): Promise<number> {
  // the clean-up runs its steps in reverse: the load stops first, then the tokens are revoked
  onCleanUp(async () => {
    await tokens?.revokeAll();
  });
  onCleanUp(() => stopAll());
  onCleanUp(async () => closeLoadGenerators());
  const units = options.jwt ? await discoverUnits(options.baseUrl, options.jwt) : null;
  if (units) log(`company ${units.companyId}: ${units.unitIds.length} live cooling units`);
  checkJwtLifetime();
  if (!(await announceAndConfirm(units?.companyId ?? null))) {
    log('cancelled: nothing was created');
    return 1;
  }

  let raw = options.givenTokens ?? [];
  if (createsTokens) {
    tokens = new LoadtestTokens(options.baseUrl, options.jwt!, namePrefix, log, startedAt);
    log(`creating ${tokenCount} tokens`);
    raw = await tokens.create(tokenCount, scopes);
  }
  const today = startedAt.toISOString().slice(0, 10);
  const deployment: Deployment = { today, companyId: units?.companyId ?? null, unitIds: units?.unitIds ?? [], sensor: NO_SENSOR_HISTORY };
  if (scopes.includes('sensor_data') && raw.length > 0) {
    const sensor = (deployment.sensor = await probeSensorHistory(options.baseUrl, raw[0]!, today));
    log(
      sensor.available
        ? `sensor history: ${sensor.firstDay} to ${sensor.lastDay}, ${sensor.units.length} units on its last full day, ${sensor.deepPages} raw pages of 1,000 in its last year`
        : `sensor history: ${sensor.reason}`,
    );
  }

  const { jwt, rate, seconds, connections } = options;
  const pathPrefix = options.baseUrl.pathname.replace(/\/$/, '');
  const scenarios = await runScenarios({ deployment, tokens: raw, jwt, rate, seconds, connections, pathPrefix });
  await tokens?.revokeAll();

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
  log(wasInterrupted() ? 'stopped: interrupted, nothing reported' : `failed: ${error instanceof Error ? error.message : String(error)}`);
  await cleanUp(log);
  process.exitCode = 1;
}
