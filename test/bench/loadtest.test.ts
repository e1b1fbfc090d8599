// `npm run loadtest` against a real 2-worker cluster (its own Redis, the spec's rate limits): an
// SRE's run completes with every scenario answered, no 429 at a rate its tokens can carry, every
// token it created revoked and no secret in its output or files; Ctrl-C in the middle of a load
// still revokes every token, and so does SIGTERM or SIGINT sent to npm's process alone (what a
// supervisor or a CI timeout sends), after which no process of the run is left; a bad command line
// is one line and exit 2, and a JWT given as an argument is refused without being repeated.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { readingChunks } from '../../src/sensors/generate.js';
import { TOKEN_LIKE } from '../../src/tokens/format.js';
import type { LoadtestReport } from '../../bench/kit/loadtest-report.js';
import { repoRoot } from '../helpers/entry.js';
import { reapOnExit } from '../helpers/reaper.js';
import { loadReadings } from '../helpers/sensor-world.js';
import { createWorld, startCluster, startRedis, until } from '../operations/harness.js';

const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: redis.url });
// ten days of readings for Acme's three units, up to today 00:00 UTC, through the real ingest
const [firstUnit] = world.acme.unitIds as [number];
// the generator numbers its units from the first one
if (world.acme.unitIds.join() !== [firstUnit, firstUnit + 1, firstUnit + 2].join())
  throw new Error(`Acme's units are not consecutive: ${world.acme.unitIds.join()}`);
const readings = [...readingChunks({ units: 3, firstUnitId: firstUnit, days: 10, seed: 3 })].join('');
await loadReadings(world.ctx.db, readings, () => new Date());

const scratch = mkdtempSync(join(tmpdir(), 'coldtrack-loadtest-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The command as a child process (npm's script, or node on the entry as the script runs it). */
function launch(args: string[], env: Record<string, string> = {}, via: 'npm' | 'node' = 'node') {
  const [command, commandArgs] =
    via === 'npm'
      ? ['npm', ['run', '--silent', 'loadtest', '--', ...args]]
      : [process.execPath, ['--import', 'tsx', 'bench/loadtest.ts', ...args]];
  const child: ChildProcess = reapOnExit(
    spawn(command as string, commandArgs as string[], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? scratch, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const finished = new Promise<Finished>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, ...output })));
  return { child, output, finished };
}

async function jwtFile(name: string, employeeId: number): Promise<{ path: string; jwt: string }> {
  const jwt = await world.jwt(employeeId);
  const path = join(scratch, name);
  writeFileSync(path, `${jwt}\n`);
  chmodSync(path, 0o600);
  return { path, jwt };
}

async function loadtestTokensOf(employeeId: number) {
  const { rows } = await world.ctx.db.pool.query<{ name: string; revoked: boolean; expires_in_hours: number }>(
    `SELECT name, revoked_at IS NOT NULL AS revoked, extract(epoch FROM expires_at - created_at) / 3600 AS expires_in_hours
     FROM api_tokens WHERE created_by = $1 AND name LIKE 'loadtest %' ORDER BY created_at`,
    [employeeId],
  );
  return rows;
}

/** Every credential-shaped string: tokens (ctk_...) and the JWT. */
function secretsIn(text: string, jwt: string): string[] {
  return [...(text.match(TOKEN_LIKE) ?? []), ...(text.includes(jwt) ? ['the JWT'] : [])];
}

t.test('a run at 20 requests/s: every scenario answered, no 429, every token revoked, no secret written', async (t) => {
  const { path, jwt } = await jwtFile('acme.jwt', world.acme.employeeId);
  const out = join(scratch, 'out');
  const run = launch(
    [
      '--base-url',
      cluster.baseUrl,
      '--jwt-file',
      path,
      '--rate',
      '20',
      '--duration',
      '3',
      '--scenarios',
      'small-page,sensor-raw,management',
      '--yes',
      '--out',
      out,
    ],
    {},
    'npm',
  );
  const { code, stdout, stderr } = await run.finished;
  t.equal(code, 0, 'exit 0');
  if (code !== 0) t.comment(stderr);

  const lines = readFileSync(join(out, 'runs.jsonl'), 'utf8').trim().split('\n');
  t.equal(lines.length, 1, 'one record for the run');
  const report = JSON.parse(lines[0]!) as LoadtestReport;
  t.match(
    report,
    {
      record: 1,
      kind: 'loadtest',
      deployment: { url: `${cluster.baseUrl}/` },
      plan: { rate: 20 },
      tokens: { source: 'created', leftActive: [] },
    },
    "runs.jsonl: a 'loadtest' line naming the deployment",
  );
  t.same(
    report.scenarios.map((scenario) => [scenario.id, scenario.status]),
    [
      ['small-page', 'measured'],
      ['sensor-raw', 'measured'],
      ['management', 'measured'],
    ],
  );
  for (const scenario of report.scenarios) {
    for (const load of scenario.loads) {
      t.ok(
        load.figures.okPerS > 0 && (load.figures.statusCodes['200'] ?? 0) > 0,
        `${scenario.id}: 2xx answers (${load.figures.okPerS.toFixed(1)}/s)`,
      );
      t.equal(load.rateLimited, 0, `${scenario.id}: no 429 at a rate the tokens carry`);
      t.same(load.otherNon2xx, {}, `${scenario.id}: no other non-2xx`);
      t.equal(load.figures.errors, 0, `${scenario.id}: no errors`);
    }
  }
  t.equal(report.deployment.companyId, world.acme.companyId, "the JWT's company, found through the API");
  t.equal(report.deployment.units, 3, 'its three live units');
  t.match(report.deployment.sensor, { available: true, units: 3 }, 'the sensor history found by the probe');

  const tokens = await loadtestTokensOf(world.acme.employeeId);
  t.equal(tokens.length, 14, 'ceil(20 x 60 / 90) = 14 tokens created');
  t.equal(report.tokens.count, 14);
  t.ok(
    tokens.every((token) => token.revoked),
    'every token created is revoked',
  );
  t.equal(report.tokens.revoked, 14, 'and the report says so');
  t.ok(
    tokens.every((token) => token.expires_in_hours > 23.9 && token.expires_in_hours < 24.1),
    'each would have expired a day later anyway',
  );
  t.ok(
    tokens.every((token) => token.name.startsWith(report.tokens.namePrefix!)),
    `named "${report.tokens.namePrefix}N"`,
  );

  t.match(stdout, /small-page\s+revenue page_size 10\s+20\s/, 'the table on stdout');
  t.notOk(existsSync(join(out, 'history.jsonl')), 'nothing published');

  const files = readdirSync(out).map((name) => readFileSync(join(out, name), 'utf8'));
  t.same(secretsIn([stdout, stderr, ...files].join('\n'), jwt), [], 'no token and no JWT in its output or its files');
});

t.test('Ctrl-C in the middle of a load: the tokens created are all revoked anyway', async (t) => {
  const { path } = await jwtFile('other.jwt', world.other.employeeId);
  const out = join(scratch, 'interrupted');
  const run = launch([
    '--base-url',
    cluster.baseUrl,
    '--jwt-file',
    path,
    '--rate',
    '20',
    '--duration',
    '60',
    '--scenarios',
    'small-page',
    '--yes',
    '--out',
    out,
  ]);
  await until('the measured load to start', () => /small-page: revenue page_size 10/.test(run.output.stderr), 60_000, 100);
  await until('its 14 tokens created', async () => (await loadtestTokensOf(world.other.employeeId)).length === 14, 5000, 100);
  await sleep(1500);
  run.child.kill('SIGINT');
  const { code, stderr } = await run.finished;
  t.equal(code, 130, 'exit 130');
  t.match(stderr, /interrupted: stopping the load and revoking the tokens created/);
  t.match(stderr, /revoked 14 tokens/);
  const tokens = await loadtestTokensOf(world.other.employeeId);
  t.equal(tokens.length, 14, 'it had created its 14 tokens');
  t.ok(
    tokens.every((token) => token.revoked),
    'every one is revoked',
  );
  t.notOk(existsSync(join(out, 'runs.jsonl')), 'an interrupted run records nothing');
});

/** Every process under pid, its children's children included (ps exits 1 when there is none). */
function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((child) => child > 0);
  } catch {
    // none
  }
  return children.flatMap((child) => [child, ...processTree(child)]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// what a supervisor or a CI timeout sends (SIGTERM), or a kill -INT, to npm's process alone: npm
// passes it on to its script, which must be the loadtest itself to hear it
for (const [signal, said] of [
  ['SIGTERM', /SIGTERM: stopping the load and revoking the tokens created/],
  ['SIGINT', /interrupted: stopping the load and revoking the tokens created/],
] as const) {
  t.test(`${signal} to npm's process in the middle of a load: the load stops, no process is left, every token is revoked`, async (t) => {
    // an employee of its own, so that only this run's tokens are counted
    const { rows } = await world.ctx.db.pool.query<{ id: number }>(
      "INSERT INTO users (role, company_id, first_name, is_active) VALUES ('REGISTERED_EMPLOYEE', $1, $2, true) RETURNING id",
      [world.other.companyId, `CI runner (${signal})`],
    );
    const employeeId = rows[0]!.id;
    const { path } = await jwtFile(`ci-${signal}.jwt`, employeeId);
    const out = join(scratch, `stopped-by-${signal}`);
    const args = ['--base-url', cluster.baseUrl, '--jwt-file', path, '--rate', '20', '--duration', '60'];
    const run = launch([...args, '--scenarios', 'small-page', '--yes', '--out', out], {}, 'npm');
    await until('the measured load to start', () => /small-page: revenue page_size 10/.test(run.output.stderr), 60_000, 100);
    await until('its 14 tokens created', async () => (await loadtestTokensOf(employeeId)).length === 14, 5000, 100);
    await sleep(1500);
    const tree = processTree(run.child.pid!);
    t.teardown(() => tree.filter(alive).forEach((pid) => process.kill(pid, 'SIGKILL')));
    t.ok(tree.length >= 2, `the run's processes under npm: the loadtest and its load generator (${tree.join(', ')})`);

    process.kill(run.child.pid!, signal); // npm's process only, not its group
    const finished = await run.finished;
    t.not(finished.code, 0, `npm exits with a failure (${finished.code ?? finished.signal})`);
    const tokens = await loadtestTokensOf(employeeId);
    t.equal(tokens.length, 14, 'it had created its 14 tokens');
    t.ok(
      tokens.every((token) => token.revoked),
      'every one is revoked by the time npm has exited',
    );
    t.match(finished.stderr, said, 'it says what it does');
    t.match(finished.stderr, /revoked 14 tokens/);
    // what outlived npm was orphaned: a stray process is given a moment to show it is still running
    const stillRunning = await until('every process of the run gone', () => tree.every((pid) => !alive(pid)), 2000, 100).then(
      () => [],
      () => tree.filter(alive),
    );
    t.same(stillRunning, [], 'no process of the run is left');
    t.notOk(existsSync(join(out, 'runs.jsonl')), 'a stopped run records nothing');
  });
}

t.test('a bad command line: one line, exit 2, and a JWT argument is never repeated', async (t) => {
  const jwt = await world.jwt(world.acme.employeeId);
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ['no --base-url', ['--yes'], { COLDTRACK_EMPLOYEE_JWT: jwt }, /--base-url URL is required/],
    ['the JWT as an argument', ['--base-url', cluster.baseUrl, '--jwt', jwt, '--yes'], {}, /never taken as arguments/],
    ['no terminal and no --yes', ['--base-url', cluster.baseUrl], { COLDTRACK_EMPLOYEE_JWT: jwt }, /add --yes/],
  ];
  const runs = await Promise.all(cases.map(([, args, env]) => launch(args, env).finished));
  cases.forEach(([name, , , message], i) => {
    const { code, stdout, stderr } = runs[i]!;
    t.equal(code, 2, `${name}: exit 2`);
    t.equal(stderr.trim().split('\n').length, 1, `${name}: one line`);
    t.match(stderr, message, `${name}: says why`);
    t.notOk(stderr.includes(jwt) || stdout.includes(jwt), `${name}: the JWT is not repeated`);
  });
  t.same(
    await loadtestTokensOf(world.acme.employeeId).then((tokens) => tokens.filter((token) => !token.revoked)),
    [],
    'and nothing was created',
  );
});
