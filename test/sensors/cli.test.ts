// The two command-line tools as an operator runs them: generate-readings into a file, ingest it
// (and again: all duplicates), and a bad row that aborts or is skipped, by exit status and report.
// generate-readings names only live units of one company (the first by default); ingest refuses
// readings of unknown units and of deleted units from their deletion on, and names a deleted unit.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createEmptyDatabase, createTestDatabase } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { nodeArgs } from '../helpers/entry.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function run(script: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs(`src/cli/${script}.ts`), ...args],
      { cwd: repoRoot, env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

t.test('generate-readings, then ingest', async (t) => {
  const db = await createTestDatabase(t);
  const company = await createCompany(db.pool, 'CLI Co');
  const dir = mkdtempSync(join(tmpdir(), 'coldtrack-readings-'));
  const file = join(dir, 'readings.ndjson');
  const args = ['--company', String(company.companyId), '--units', '3', '--days', '2', '--end', '2026-01-01', '--format', 'ndjson'];
  const env = { DATABASE_URL: db.url };

  const generated = await run('generate-readings', [...args, '--out', file], env);
  t.equal(generated.status, 0, generated.stderr);
  t.match(generated.stderr, /wrote 1152 readings/);
  const again = await run('generate-readings', args, env);
  const first = again.stdout.split('\n')[0]!;
  t.same(JSON.parse(first), {
    cooling_unit_id: company.unitIds[0],
    specification_type: 'TEMPERATURE',
    recorded_at: '2025-12-30T00:00:00Z',
    value: JSON.parse(first).value,
  });
  t.equal(again.stdout.split('\n').length - 1, 1152, 'the same readings on stdout');

  const loaded = await run('ingest', [file, '--batch-size', '500'], env);
  t.equal(loaded.status, 0, loaded.stderr);
  t.match(loaded.stderr, /readings loaded: 1152, duplicates ignored: 0, bad rows: 0/);
  const twice = await run('ingest', [file], env);
  t.match(twice.stderr, /readings loaded: 0, duplicates ignored: 1152/, 'a second run only finds duplicates');
  const { rows } = await db.pool.query<{ n: number }>('SELECT sum(sample_count)::int AS n FROM sensor_readings_daily');
  t.equal(rows[0]!.n, 1152, 'the daily aggregate counts each once');

  const bad = join(dir, 'bad.csv');
  writeFileSync(
    bad,
    `cooling_unit_id,specification_type,recorded_at,value\n${company.unitIds[1]},HUMIDITY,2025-12-01T00:00:00Z,88\n` +
      `${company.unitIds[1]},HUMIDITY,2025-12-01T00:15:00Z,lots\n${company.unitIds[1]},HUMIDITY,2025-12-01T00:30:00Z,89\n`,
  );
  const aborted = await run('ingest', [bad], env);
  t.equal(aborted.status, 1, 'abort (the default) exits 1');
  t.match(aborted.stderr, /line 3: value must be a finite number, not "lots"/);
  t.match(aborted.stderr, /aborted at line 3\. readings loaded: 0/, 'its batch is not loaded');
  const skipped = await run('ingest', [bad, '--on-error', 'skip'], env);
  t.equal(skipped.status, 0);
  t.match(skipped.stderr, /line 3: value must be a finite number/);
  t.match(skipped.stderr, /readings loaded: 2, duplicates ignored: 0, bad rows skipped: 1/);

  t.equal((await run('ingest', [bad, '--on-error', 'maybe'], env)).status, 2, 'usage errors exit 2');
  t.match((await run('ingest', [bad], { DATABASE_URL: '' })).stderr, /DATABASE_URL is required/);
});

/** The unit ids a generated CSV names. */
const unitsIn = (csv: string) =>
  [
    ...new Set(
      csv
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => Number(line.split(',')[0])),
    ),
  ].sort((x, y) => x - y);

t.test("generate-readings: one company's live units only, the first company by default", async (t) => {
  const db = await createTestDatabase(t);
  const first = await createCompany(db.pool, 'First Co');
  const second = await createCompany(db.pool, 'Second Co');
  const env = { DATABASE_URL: db.url };
  const base = ['--days', '1', '--end', '2026-01-01'];

  const chosen = await run('generate-readings', ['--company', String(second.companyId), ...base], env);
  t.equal(chosen.status, 0, chosen.stderr);
  t.same(unitsIn(chosen.stdout), second.unitIds, "--company: all of its live units, not its deleted one, no other company's");
  t.notOk(unitsIn(chosen.stdout).includes(second.deletedUnitId));
  t.match(
    chosen.stderr,
    `company ${second.companyId} (Second Co): readings for 3 of its 3 live cooling units (${second.unitIds.join(', ')})`,
  );

  const byDefault = await run('generate-readings', ['--units', '2', ...base], env);
  t.equal(byDefault.status, 0, byDefault.stderr);
  t.same(unitsIn(byDefault.stdout), first.unitIds.slice(0, 2), 'no --company: the first company; --units 2: its first two live units');
  t.match(byDefault.stderr, /; --company to choose another$/m, 'says which company it chose and how to choose');

  const tooMany = await run('generate-readings', ['--company', String(first.companyId), '--units', '10', ...base], env);
  t.equal(tooMany.status, 2, '--units beyond the live units: exit 2');
  t.match(tooMany.stderr, `company ${first.companyId} (First Co) has 3 live cooling units: --units 3 at most`);
  t.equal(tooMany.stdout, '', 'and no readings');
  const unknown = await run('generate-readings', ['--company', '2147483647', ...base], env);
  t.equal(unknown.status, 2);
  t.match(unknown.stderr, /company 2147483647: no such company/);
  const removed = await run('generate-readings', ['--first-unit-id', '1', ...base], env);
  t.equal(removed.status, 2, 'ids of its own choosing are no longer taken');

  const empty = await createEmptyDatabase(t);
  const none = await run('generate-readings', base, { DATABASE_URL: empty.url });
  t.equal(none.status, 1);
  t.match(none.stderr, /the database is not migrated yet: run npm run migrate first/);

  // on a terminal, no --out: refused rather than megabytes of CSV on the screen (script(1) gives it a pty)
  const command = [process.execPath, ...nodeArgs('src/cli/generate-readings.ts'), ...base].map((word) => `'${word}'`).join(' ');
  const terminal = await new Promise<string>((resolve) =>
    execFile('script', ['-qec', command, '/dev/null'], { cwd: repoRoot, env: { ...process.env, ...env } }, (_error, stdout) =>
      resolve(stdout),
    ),
  );
  t.match(terminal, /give --out FILE, or pipe the readings/, 'a terminal gets the reason');
  t.notMatch(terminal, /TEMPERATURE/, 'and no readings');

  const ignored = (path: string) => {
    try {
      execFileSync('git', ['check-ignore', '-q', path], { cwd: repoRoot });
      return true;
    } catch {
      return false;
    }
  };
  t.ok(ignored('readings.csv') && ignored('readings.ndjson'), 'readings.csv and readings.ndjson at the root are git-ignored');
});

t.test('ingest: readings of a deleted unit from its deletion on are bad rows; earlier ones load, and the unit is named', async (t) => {
  const db = await createTestDatabase(t);
  const company = await createCompany(db.pool, 'Retiring Co');
  const gone = company.deletedUnitId;
  await db.pool.query("UPDATE cooling_units SET deleted_at = '2026-01-10T12:00:00Z' WHERE id = $1", [gone]);
  const dir = mkdtempSync(join(tmpdir(), 'coldtrack-readings-'));
  const file = join(dir, 'late.csv');
  writeFileSync(
    file,
    'cooling_unit_id,specification_type,recorded_at,value\n' +
      `${gone},TEMPERATURE,2026-01-10T11:45:00Z,4.5\n` +
      `${company.unitIds[0]},TEMPERATURE,2026-01-10T12:00:00Z,4.1\n` +
      `${gone},TEMPERATURE,2026-01-10T12:00:00Z,4.6\n` +
      `${gone},HUMIDITY,2026-01-11T00:00:00Z,90\n`,
  );
  const env = { DATABASE_URL: db.url };

  const aborted = await run('ingest', [file], env);
  t.equal(aborted.status, 1, 'abort (the default): exit 1');
  t.match(aborted.stderr, `line 4: cooling unit ${gone} was deleted at 2026-01-10T12:00:00.000Z, before this reading`);
  t.match(aborted.stderr, /aborted at line 4\. readings loaded: 0/);

  const skipped = await run('ingest', [file, '--on-error', 'skip'], env);
  t.equal(skipped.status, 0, skipped.stderr);
  t.match(
    skipped.stderr,
    `cooling unit ${gone} was deleted at 2026-01-10T12:00:00.000Z: its readings from before then load as its history`,
  );
  t.match(skipped.stderr, /line 4: .* before this reading\n[\s\S]*line 5: .* before this reading/, 'each later reading named by its line');
  t.match(skipped.stderr, /readings loaded: 2, duplicates ignored: 0, bad rows skipped: 2/);
  const { rows } = await db.pool.query<{ unit: number; at: Date }>(
    'SELECT cooling_unit_id AS unit, recorded_at AS at FROM sensor_readings ORDER BY recorded_at, cooling_unit_id',
  );
  t.same(
    rows.map((row) => [row.unit, row.at.toISOString()]),
    [
      [gone, '2026-01-10T11:45:00.000Z'],
      [company.unitIds[0], '2026-01-10T12:00:00.000Z'],
    ],
    "the deleted unit's reading from before its deletion is loaded, nothing of it after",
  );

  const help = await run('ingest', ['--help'], env);
  t.equal(help.status, 0);
  t.match(
    help.stdout,
    /one that does not exist is a bad row, and so is one\n\s+of a deleted unit recorded at or after its deletion/,
    '--help says so',
  );
});
