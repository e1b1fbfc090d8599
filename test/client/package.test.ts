// @coldtrack/client as a partner engineer meets it, outside this repository: the workspace's build
// packed with `npm pack`, installed from the tarball into a throwaway project in the system's
// temporary directory (no tsx, no workspace, no path back here). There a plain `node` script
// pages through a real query of the service on a loopback port; `tsc --strict` accepts a consumer
// file and rejects one reading a record field that does not exist; the package's command,
// coldtrack-export, exports a unit through the bin link npm made; and the tarball's file list
// holds only the build and the package's documents: no server code, no code generator, no tests.
import { mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { packClient, partnerProject, REPO_ROOT, run } from './packed-client.js';
import { createExportWorld, databaseHourly, fileRecords, YEAR } from './world.js';

const TSC = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const PAGING_SCRIPT = `
import { ColdtrackClient, MAX_PAGE_SIZE } from '@coldtrack/client';
const { baseUrl, token, unit } = JSON.parse(process.argv[2]);
const client = new ColdtrackClient({ baseUrl, token });
let pages = 0;
let records = 0;
for await (const page of client.pages('sensorData', { cooling_unit_id: unit, start_date: '2025-03-01', end_date: '2025-03-31', aggregation: 'hourly', page_size: 500 })) {
  pages++;
  records += page.data.length;
}
console.log(JSON.stringify({ pages, records, maxPageSize: MAX_PAGE_SIZE }));
`;

// a partner's TypeScript: the records are typed from the OpenAPI document
const consumer = (field: string) => `
import { ColdtrackClient, type SensorRecord } from '@coldtrack/client';
import { exportSensorHistory } from '@coldtrack/client/export';
const client = new ColdtrackClient({ baseUrl: 'https://api.coldtrack.example', token: 'ctk_x' });
export async function mean(unit: number): Promise<number> {
  let sum = 0;
  let n = 0;
  for await (const record of client.paginate('sensorData', { cooling_unit_id: unit, aggregation: 'daily' })) {
    const typed: SensorRecord = record;
    sum += typed.${field};
    n++;
  }
  return n === 0 ? 0 : sum / n;
}
export const run = () => exportSensorHistory(client, { baseUrl: 'https://api.coldtrack.example', from: '2025-01-01', to: '2025-01-31', aggregation: 'hourly', units: 'all', format: 'csv', outDir: 'out' });
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    skipLibCheck: false,
    // a partner's server project has Node's types; this one borrows the repository's copy of them
    typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
    types: ['node'],
  },
  files: ['consumer.ts'],
};

t.test('the packed package in a project outside the repository', async (t) => {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'coldtrack-client-package-')));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  t.notOk(scratch.startsWith(REPO_ROOT), `the project lives outside the repository (${scratch})`);
  const [{ tarball, files }, world] = await Promise.all([packClient(scratch), createExportWorld(t)]);

  t.test('the tarball holds the build and the package documents only', async (t) => {
    t.ok(
      files.includes('dist/index.js') && files.includes('dist/index.d.ts') && files.includes('dist/index.js.map'),
      'JavaScript, declarations, source maps',
    );
    t.ok(files.includes('dist/cli/export.js') && files.includes('dist/export/index.js'), 'the command and the export engine');
    t.ok(
      ['package.json', 'README.md', 'CHANGELOG.md'].every((file) => files.includes(file)),
      'package.json, README, CHANGELOG',
    );
    t.same(
      files.filter((file) => !file.startsWith('dist/') && !['package.json', 'README.md', 'CHANGELOG.md'].includes(file)),
      [],
      'nothing else at the top',
    );
    t.same(
      files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
      [],
      'no TypeScript source',
    );
    t.same(
      files.filter((file) => /codegen|test|(^|\/)src\//.test(file)),
      [],
      'no code generator, tests or sources',
    );
  });

  const project = await partnerProject(join(scratch, 'partner'), tarball);
  const [unit] = world.unitIds as [number];

  t.test('plain node imports it and pages through a real query', async (t) => {
    writeFileSync(join(project, 'paging.mjs'), PAGING_SCRIPT);
    const paged = await run(
      process.execPath,
      ['paging.mjs', JSON.stringify({ baseUrl: world.baseUrl, token: world.token, unit })],
      project,
    );
    t.equal(paged.code, 0, `node paging.mjs exits 0${paged.code ? `: ${paged.stderr}` : ''}`);
    // March 2025: 31 days x 24 hours x 2 types, 500 a page
    t.same(JSON.parse(paged.stdout.trim()), { pages: 3, records: 1488, maxPageSize: 1000 }, '1,488 hourly records in 3 pages');
  });

  t.test('tsc --strict type-checks a consumer, and fails one reading a field records lack', async (t) => {
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    writeFileSync(join(project, 'consumer.ts'), consumer('value'));
    const good = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], project);
    t.equal(good.code, 0, `record.value type-checks${good.code ? `: ${good.stdout}${good.stderr}` : ''}`);
    writeFileSync(join(project, 'consumer.ts'), consumer('temperature'));
    const wrong = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], project);
    t.not(wrong.code, 0, 'record.temperature does not');
    t.match(
      wrong.stdout,
      /consumer\.ts\(\d+,\d+\): error TS2339: Property 'temperature' does not exist on type/,
      'the error names the field',
    );
  });

  t.test('coldtrack-export, through the bin link, exports a unit', async (t) => {
    const exported = await run(
      join(project, 'node_modules', '.bin', 'coldtrack-export'),
      ['--base-url', world.baseUrl, '--from', YEAR.from, '--to', YEAR.to, '--units', String(unit), '--format', 'ndjson', '--out', 'export'],
      project,
      { env: { COLDTRACK_TOKEN: world.token } },
    );
    t.equal(exported.code, 0, `exit 0${exported.code ? `: ${exported.stderr}` : ''}`);
    t.match(exported.stderr, /export complete: 17,520 records in 1 files/, 'the completion line on stderr');
    t.same(
      readdirSync(join(project, 'export')).sort(),
      [`cooling-unit-${unit}.ndjson`, 'export-changes-cursor.json', 'export-checkpoint.json'],
      'one file per unit, the checkpoint and the change-feed cursor',
    );
    const { count, checksum } = await databaseHourly(world.db, unit);
    t.same(
      fileRecords(join(project, 'export', `cooling-unit-${unit}.ndjson`), 'ndjson'),
      { header: null, count, checksum },
      "the database's hourly rows exactly",
    );
    const refused = await run(
      join(project, 'node_modules', '.bin', 'coldtrack-export'),
      ['--base-url', world.baseUrl, '--from', YEAR.from, '--to', YEAR.to, '--out', 'again'],
      project,
    );
    t.equal(refused.code, 2, 'without COLDTRACK_TOKEN: exit 2');
  });
});
