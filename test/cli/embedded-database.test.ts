// The CLI commands find the running `npm start`'s embedded database by themselves when
// DATABASE_URL is unset (its URL in DATA_DIR/running.json while it runs), so docs/operations.md's "Loading
// sensor readings" works against the demo as printed; with nothing running they say which command comes first.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { jwtVerify } from 'jose';
import { announceRunning } from '../../src/db/embedded-handoff.js';
import { createEmptyDatabase, createTestDatabase } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { nodeArgs } from '../helpers/entry.js';

const execFileAsync = promisify(execFile);

/** A CLI command as a user runs it: its exit code, stdout and stderr lines. */
async function command(script: string, args: string[], env: Record<string, string>) {
  const cleanEnv: NodeJS.ProcessEnv = { ...process.env };
  delete cleanEnv.DATABASE_URL;
  delete cleanEnv.JWT_SECRET;
  Object.assign(cleanEnv, env);
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [...nodeArgs(`src/cli/${script}.ts`), ...args], {
      env: cleanEnv,
      timeout: 60_000,
    });
    return { code: 0, stdout, lines: stderr.split('\n').filter(Boolean) };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, lines: failed.stderr.split('\n').filter(Boolean) };
  }
}

t.test('with npm start running: migrate, ingest and mint-jwt use its database and secret', async (t) => {
  const db = await createTestDatabase(t);
  const company = await createCompany(db.pool, 'Demo Co');
  const dataDir = mkdtempSync(join(tmpdir(), 'coldtrack-handoff-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // what the embedded mode leaves in DATA_DIR while it runs (this process plays npm start)
  announceRunning(dataDir, db.url);
  const secret = 'embedded-demo-secret-embedded-demo-secret';
  writeFileSync(join(dataDir, 'embedded.json'), JSON.stringify({ password: 'x', jwtSecret: secret }));
  const env = { DATA_DIR: dataDir };

  const migrate = await command('migrate', [], env);
  t.equal(migrate.code, 0, `migrate: ${migrate.lines.join(' | ')}`);
  t.match(migrate.stdout, /database is up to date/);
  t.match(migrate.lines[0], /DATABASE_URL is not set: using the embedded database of the running npm start/);

  const csv = join(dataDir, 'readings.csv');
  writeFileSync(csv, `cooling_unit_id,specification_type,recorded_at,value\n${company.unitIds[0]},TEMPERATURE,2026-01-01T00:00:00Z,4.5\n`);
  const ingest = await command('ingest', [csv], env);
  t.equal(ingest.code, 0, `ingest: ${ingest.lines.join(' | ')}`);
  t.match(ingest.lines.at(-1), /readings loaded: 1,/);
  t.same((await db.pool.query('SELECT count(*)::int AS n FROM sensor_readings')).rows, [{ n: 1 }], 'the reading is in the demo database');

  const mint = await command('mint-jwt', [String(company.employeeId)], env);
  t.equal(mint.code, 0);
  t.equal(
    (await jwtVerify(mint.stdout.trim(), new TextEncoder().encode(secret))).payload.sub,
    String(company.employeeId),
    "signed with the demo's secret",
  );
});

t.test('without DATABASE_URL and nothing running: one line saying what comes first', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'coldtrack-handoff-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // a file left by a killed run: its pid is gone
  writeFileSync(join(dataDir, 'running.json'), JSON.stringify({ url: 'postgres://nobody@127.0.0.1:1/x', pid: 2 ** 22 + 12345 }));
  for (const script of ['migrate', 'ingest']) {
    const run = await command(script, script === 'ingest' ? ['-'] : [], { DATA_DIR: dataDir });
    t.equal(run.code, 1, `${script}: exit 1`);
    t.equal(run.lines.length, 1, `${script}: one line (${JSON.stringify(run.lines)})`);
    t.match(
      run.lines[0],
      /^Invalid configuration: DATABASE_URL is required for npm run \w+ \(or start the embedded demo with npm start first/,
    );
  }
});

t.test('ingest into a database without units says to load them first', async (t) => {
  const { url } = await createEmptyDatabase(t);
  await command('migrate', [], { DATABASE_URL: url });
  const dataDir = mkdtempSync(join(tmpdir(), 'coldtrack-handoff-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  announceRunning(dataDir, url);
  const csv = join(dataDir, 'readings.csv');
  writeFileSync(csv, 'cooling_unit_id,specification_type,recorded_at,value\n1,TEMPERATURE,2026-01-01T00:00:00Z,4.5\n');
  const run = await command('ingest', [csv, '--on-error', 'skip'], { DATA_DIR: dataDir });
  t.ok(run.lines.includes('line 2: cooling unit 1 does not exist'), 'the bad row, by line');
  t.ok(
    run.lines.some((line) => /no cooling units yet: load them first \(npm run seed -- --demo/.test(line)),
    `the hint (${JSON.stringify(run.lines)})`,
  );
});

t.test('ingest into a database never migrated says to migrate first', async (t) => {
  const { url } = await createEmptyDatabase(t);
  const dataDir = mkdtempSync(join(tmpdir(), 'coldtrack-handoff-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const csv = join(dataDir, 'readings.csv');
  writeFileSync(csv, 'cooling_unit_id,specification_type,recorded_at,value\n1,TEMPERATURE,2026-01-01T00:00:00Z,4.5\n');
  const run = await command('ingest', [csv], { DATABASE_URL: url });
  t.equal(run.code, 1);
  t.ok(run.lines.includes('the database is not migrated yet: run npm run migrate first'), `the hint (${JSON.stringify(run.lines)})`);
});
