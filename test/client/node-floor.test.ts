// The partner client on the oldest Node it claims (client/README.md: Node 18 and later), not the
// Node the service runs on: partners' servers are often older. The client is built to JavaScript
// as a package would ship it (esbuild, target node18, one module per file), packed with `npm pack`
// and installed from the tarball into a project of its own whose Node is the npm registry's
// `node` package at the floor (installed once into node_modules/.cache/). A plain ESM script there
// pages through a year of hourly sensor history of a real app on a loopback port and hits a 400:
// the records must be the database's exactly and the error a typed ColdtrackApiError.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import t, { type Test } from 'tap';
import { createExportWorld, databaseHourly } from './world.js';

/** The oldest Node line the client claims, at its last release. */
const FLOOR = '18.20.8';
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FLOOR_NODE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'coldtrack-node-floor', FLOOR);

interface Run { code: number; stdout: string; stderr: string }

function run(command: string, args: string[], cwd: string, timeout = 150_000): Promise<Run> {
  // what `npm test` passes down to its children would otherwise configure the inner npm
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }));
  });
}

const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], cwd);

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

/** client/ built and packed as a package would be; the tarball's path. */
async function packedClient(scratch: string): Promise<string> {
  const clientDir = join(REPO_ROOT, 'client');
  const packageDir = join(scratch, 'package');
  buildSync({
    // the client's own modules (not its codegen, not the export engine built on it)
    entryPoints: readdirSync(clientDir).filter((file) => file.endsWith('.ts')).map((file) => join(clientDir, file)),
    outdir: packageDir,
    format: 'esm',
    platform: 'node',
    target: `node${FLOOR.split('.')[0]}`,
    logLevel: 'warning',
  });
  writeFileSync(join(packageDir, 'package.json'), JSON.stringify({
    name: '@coldtrack/client', version: '0.0.0-floor', type: 'module', exports: { '.': './index.js' }, engines: { node: `>=${FLOOR.split('.')[0]}` },
  }));
  const packed = await npm(['pack', '--pack-destination', scratch], packageDir);
  if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  return join(scratch, packed.stdout.trim().split('\n').at(-1)!);
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
  const [node, tarball, world] = await Promise.all([floorNode(t), packedClient(scratch), createExportWorld(t)]);

  const project = join(scratch, 'partner');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  const installed = await npm(['install', tarball], project);
  t.equal(installed.code, 0, `npm install of the tarball${installed.code ? `: ${installed.stderr}` : ''}`);
  writeFileSync(join(project, 'partner.mjs'), PARTNER_SCRIPT);

  const [unit] = world.unitIds as [number];
  const partner = await run(node, ['partner.mjs', JSON.stringify({ baseUrl: world.baseUrl, token: world.token, unit })], project);
  t.equal(partner.code, 0, `the script exits 0${partner.code ? `: ${partner.stderr}` : ''}`);
  const result = JSON.parse(partner.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
  t.equal(result.node, `v${FLOOR}`, `it ran on Node ${FLOOR}`);
  t.equal(result.pages, 18, '18 pages of 1,000');
  const { count, checksum } = await databaseHourly(world.db, unit);
  t.same({ count: result.count, checksum: result.checksum }, { count, checksum }, "17,520 hourly records, the database's rows exactly");
  t.same(result.refused, { isApiError: true, status: 400, code: 'invalid_request', field: 'aggregation' }, 'a bad parameter: ColdtrackApiError 400 naming it');
});
