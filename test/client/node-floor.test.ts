// The partner client on the oldest Node it claims (client/README.md: Node 18 and later), not the
// Node the service runs on: partners' servers are often older. The package @coldtrack/client as it
// ships (its tsc build, packed with `npm pack`: packed-client.ts) is installed from the tarball
// into a project of its own whose Node is the npm registry's `node` package at the floor
// (installed once into node_modules/.cache/). A plain ESM script there pages through a year of
// hourly sensor history of a real app on a loopback port and hits a 400: the records must be the
// database's exactly and the error a typed ColdtrackApiError. The package's command,
// coldtrack-export, then exports the same unit on that Node.
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { npm, packClient, partnerProject, REPO_ROOT, run } from './packed-client.js';
import { createExportWorld, databaseHourly, fileRecords, YEAR } from './world.js';

/** The oldest Node line the client claims, at its last release. */
const FLOOR = '18.20.8';
const FLOOR_NODE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'coldtrack-node-floor', FLOOR);

/** The floor's node binary: the registry's `node` package, installed once and kept. */
async function floorNode(t: Test): Promise<string> {
  const binary = join(FLOOR_NODE_DIR, 'node_modules', '.bin', 'node');
  if (existsSync(binary) && (await run(binary, ['--version'], REPO_ROOT)).stdout.trim() === `v${FLOOR}`) return binary;
  mkdirSync(dirname(FLOOR_NODE_DIR), { recursive: true });
  const staging = mkdtempSync(join(dirname(FLOOR_NODE_DIR), 'installing-'));
  t.teardown(() => rmSync(staging, { recursive: true, force: true }));
  writeFileSync(join(staging, 'package.json'), JSON.stringify({ private: true, allowScripts: { node: true } }));
  const installed = await npm(['install', `node@${FLOOR}`], staging);
  if (installed.code !== 0) throw new Error(`npm install node@${FLOOR} failed: ${installed.stderr}`);
  rmSync(FLOOR_NODE_DIR, { recursive: true, force: true });
  renameSync(staging, FLOOR_NODE_DIR);
  return binary;
}

// what a partner's script does: page through a year of one unit's hourly history, then a mistake
const PARTNER_SCRIPT = `
import { createHash } from 'node:crypto';
import { ColdtrackApiError, ColdtrackClient } from '@coldtrack/client';
const { baseUrl, token, unit } = JSON.parse(process.argv[2]);
const client = new ColdtrackClient({ baseUrl, token });
const hash = createHash('sha256');
let count = 0;
let pages = 0;
for await (const page of client.pages('sensorData', { cooling_unit_id: unit, start_date: '2025-01-01', end_date: '2025-12-31', aggregation: 'hourly' })) {
  pages++;
  for (const r of page.data) {
    count++;
    hash.update([new Date(r.timestamp).toISOString(), r.cooling_unit_id, r.specification_type, r.value, r.sample_count, r.min ?? '', r.max ?? ''].join('|') + '\\n');
  }
}
let refused = null;
try {
  await client.sensorData({ cooling_unit_id: unit, aggregation: 'weekly' });
} catch (error) {
  refused = { isApiError: error instanceof ColdtrackApiError, status: error.status, code: error.code, field: error.details?.field };
}
console.log(JSON.stringify({ node: process.version, pages, count, checksum: hash.digest('hex'), refused }));
`;

t.test(`the packed client on Node ${FLOOR}: a year of hourly history, and a typed 400`, async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'coldtrack-client-floor-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const [node, { tarball }, world] = await Promise.all([floorNode(t), packClient(scratch), createExportWorld(t)]);

  const project = await partnerProject(join(scratch, 'partner'), tarball);
  writeFileSync(join(project, 'partner.mjs'), PARTNER_SCRIPT);

  const [unit] = world.unitIds as [number];
  const partner = await run(node, ['partner.mjs', JSON.stringify({ baseUrl: world.baseUrl, token: world.token, unit })], project);
  t.equal(partner.code, 0, `the script exits 0${partner.code ? `: ${partner.stderr}` : ''}`);
  const result = JSON.parse(partner.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
  t.equal(result.node, `v${FLOOR}`, `it ran on Node ${FLOOR}`);
  t.equal(result.pages, 18, '18 pages of 1,000');
  const { count, checksum } = await databaseHourly(world.db, unit);
  t.same({ count: result.count, checksum: result.checksum }, { count, checksum }, "17,520 hourly records, the database's rows exactly");
  t.same(
    result.refused,
    { isApiError: true, status: 400, code: 'invalid_request', field: 'aggregation' },
    'a bad parameter: ColdtrackApiError 400 naming it',
  );

  // the command, started as a partner's shell would through the bin link, on the floor's node
  const command = join(project, 'node_modules', '.bin', 'coldtrack-export');
  const exported = await run(
    node,
    [command, '--base-url', world.baseUrl, '--from', YEAR.from, '--to', YEAR.to, '--units', String(unit), '--out', 'export'],
    project,
    {
      env: { COLDTRACK_TOKEN: world.token },
    },
  );
  t.equal(exported.code, 0, `coldtrack-export exits 0 on Node ${FLOOR}${exported.code ? `: ${exported.stderr}` : ''}`);
  t.same(
    fileRecords(join(project, 'export', `cooling-unit-${unit}.csv`), 'csv').checksum,
    checksum,
    "the unit's file holds the database's hourly rows",
  );
});
