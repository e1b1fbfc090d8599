// @coldtrack/client as a partner engineer meets it, outside this repository: `npm pack` in a clone
// that never built the package (its prepack script builds it), the tarball installed into a
// throwaway project in the system's temporary directory (no tsx, no workspace, no path back here).
// There a plain `node` script pages through a real query of the service on a loopback port;
// `tsc --strict` accepts a consumer file and rejects one reading a record field that does not
// exist; the package's command, coldtrack-export, exports a unit through the bin link npm made;
// the client and the command name themselves and package.json's version in User-Agent; and the
// tarball's file list holds only the build and the package's documents: no server code, no code
// generator, no tests.
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { agentRecorder, CLIENT_DIR, packClient, partnerProject, REPO_ROOT, run } from './packed-client.js';
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

// a request with the default User-Agent, one with the partner's own, one with an empty one; each
// is refused (401)
const AGENT_SCRIPT = `
import { ColdtrackClient } from '@coldtrack/client';
const baseUrl = process.argv[2];
const statuses = [];
const calls = [
  [{}, (client) => client.sensorData()],
  [{ userAgent: 'partner-etl/3.1' }, (client) => client.me()],
  [{ userAgent: '' }, (client) => client.coolingUnits.list()],
];
for (const [options, call] of calls) {
  try {
    await call(new ColdtrackClient({ baseUrl, token: 'ctk_agentcheck', ...options }));
  } catch (error) {
    statuses.push(error.status);
  }
}
console.log(JSON.stringify(statuses));
`;

const VERSION = (JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')) as { version: string }).version;

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
  const [{ tarball, files, builtBeforePack }, world] = await Promise.all([packClient(scratch), createExportWorld(t)]);

  t.test('the tarball holds the build and the package documents only', async (t) => {
    t.equal(builtBeforePack, false, 'packed from a clone with no dist/: its prepack script built it');
    t.ok(files.includes('dist/version.js'), "the version module, written from package.json's version");
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

  t.test("requests name the client and package.json's version in User-Agent", async (t) => {
    const recorder = await agentRecorder();
    t.teardown(() => recorder.close());
    writeFileSync(join(project, 'agent.mjs'), AGENT_SCRIPT);
    const script = await run(process.execPath, ['agent.mjs', recorder.url], project);
    t.equal(script.code, 0, `node agent.mjs exits 0${script.code ? `: ${script.stderr}` : ''}`);
    t.same(JSON.parse(script.stdout.trim()), [401, 401, 401], 'the three requests reached the recorder and were refused');
    t.same(
      recorder.requests,
      [
        { path: '/api/v1/sensor-data', userAgent: `@coldtrack/client/${VERSION}` },
        { path: '/api/v1/me', userAgent: 'partner-etl/3.1' },
        { path: '/api/v1/cooling-units', userAgent: `@coldtrack/client/${VERSION}` },
      ],
      'the default names the package and its version; the userAgent option replaces it, an empty one does not',
    );

    const before = recorder.requests.length;
    const exported = await run(
      join(project, 'node_modules', '.bin', 'coldtrack-export'),
      ['--base-url', recorder.url, '--from', '2025-01-01', '--to', '2025-01-31', '--out', 'agent-export'],
      project,
      { env: { COLDTRACK_TOKEN: 'ctk_agentcheck' } },
    );
    t.equal(exported.code, 1, `coldtrack-export stops at the 401 (exit 1): ${exported.stderr.trim()}`);
    const agents = recorder.requests.slice(before).map((request) => request.userAgent);
    t.ok(agents.length > 0, 'coldtrack-export made a request');
    t.same([...new Set(agents)], [`coldtrack-export @coldtrack/client/${VERSION}`], 'every one names the command and the client version');
  });
});

t.test("the sources' version module names package.json's version (tsx and the type check read it)", async (t) => {
  const source = readFileSync(join(CLIENT_DIR, 'src', 'version.ts'), 'utf8');
  t.match(source, `export const CLIENT_VERSION = '${VERSION}';`, 'client/src/version.ts, as the build writes it');
});
