// A partner's generator reads the served OpenAPI document: Redocly CLI's recommended rules
// (redocly.yaml) find nothing in it, with one recorded exception, the spec's trailing slash
// (.redocly.lint-ignore.yaml). The same lint of a broken copy shows it would find what it
// should: an operation without an operationId or security, no servers, another trailing slash.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { servedOpenApiDocument } from '../../client/codegen/generate-types.js';
import { redoclyLint, REPO_ROOT, writeServedDocument } from '../tools/lint-openapi.js';

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}
const report = (stdout: string) => JSON.parse(stdout) as LintReport;
const served = await servedOpenApiDocument();

t.test('the served document lints clean under the recommended rules', async (t) => {
  await writeServedDocument(served);
  const run = await redoclyLint(['--format', 'json']);
  t.equal(run.code, 0, `redocly lint exits 0${run.code ? `: ${run.stdout}${run.stderr}` : ''}`);
  const { totals, problems } = report(run.stdout);
  t.same(
    problems.map((problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer}`),
    [],
    'no problem',
  );
  t.same(totals, { errors: 0, warnings: 0, ignored: 1 }, 'no error, no warning; the one exception ignored');
});

t.test('the configuration: the recommended rules, one exception', async (t) => {
  const config = parse(readFileSync(join(REPO_ROOT, 'redocly.yaml'), 'utf8')) as Record<string, unknown>;
  t.same(config.extends, ['recommended'], 'extends the recommended set');
  t.notOk('rules' in config, 'no rule turned off or lowered');
  const ignored = parse(readFileSync(join(REPO_ROOT, '.redocly.lint-ignore.yaml'), 'utf8')) as unknown;
  t.same(
    ignored,
    { '.openapi/openapi.json': { 'no-path-trailing-slash': ['#/paths/~1v1~1users~1validate-cooling-user-id~1'] } },
    "the ignore file holds the spec's trailing slash and nothing else",
  );
});

t.test('the lint finds what a generator would stumble on', async (t) => {
  const broken = structuredClone(served) as { servers?: unknown; paths: Record<string, Record<string, Record<string, unknown>>> };
  delete broken.servers;
  delete broken.paths['/api/v1/analytics/revenue']!.get!.operationId;
  delete broken.paths['/healthz']!.get!.security;
  broken.paths['/api/v1/cooling-units/'] = broken.paths['/api/v1/cooling-units']!;
  delete broken.paths['/api/v1/cooling-units'];
  const scratch = mkdtempSync(join(tmpdir(), 'coldtrack-lint-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const file = join(scratch, 'broken.json');
  writeFileSync(file, JSON.stringify(broken));

  const run = await redoclyLint([file, '--config', join(REPO_ROOT, 'redocly.yaml'), '--format', 'json']);
  t.equal(run.code, 1, 'redocly lint exits 1');
  const found = report(run.stdout).problems.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}`);
  t.match(found, [], 'problems reported');
  for (const expected of [
    'no-empty-servers #/',
    'operation-operationId #/paths/~1api~1v1~1analytics~1revenue/get/operationId',
    'security-defined #/paths/~1healthz/get',
    'no-path-trailing-slash #/paths/~1api~1v1~1cooling-units~1',
  ])
    t.ok(
      found.some((problem) => problem.startsWith(expected)),
      `${expected}: reported (${found.join('; ')})`,
    );
});
