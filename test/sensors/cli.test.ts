// The two command-line tools as an operator runs them: generate-readings into a file, ingest it
// (and again: all duplicates), and a bad row that aborts or is skipped, by exit status and report.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
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
  const args = ['--units', '3', '--days', '2', '--first-unit-id', String(company.unitIds[0]), '--end', '2026-01-01', '--format', 'ndjson'];

  const generated = await run('generate-readings', [...args, '--out', file]);
  t.equal(generated.status, 0);
  t.match(generated.stderr, /wrote 1152 readings/);
  const again = await run('generate-readings', args);
  const first = again.stdout.split('\n')[0]!;
  t.same(JSON.parse(first), {
    cooling_unit_id: company.unitIds[0],
    specification_type: 'TEMPERATURE',
    recorded_at: '2025-12-30T00:00:00Z',
    value: JSON.parse(first).value,
  });
  t.equal(again.stdout.split('\n').length - 1, 1152, 'the same readings on stdout');

  const env = { DATABASE_URL: db.url };
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
