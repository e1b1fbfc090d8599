// The alerting rules, proven offline: promtool checks the rule files (slo-rules.yml too, generated
// from ops/slo/slos.yml: test/ops/slo.test.ts) and runs their unit tests (ops/prometheus/tests/);
// every alert has a case where it fires and one where it does not, a runbook section in
// docs/runbooks.md that its runbook_url points at, and reads only series the service exports or
// the recording rules make. (The real Prometheus, scraping a real cluster, is
// test/ops/prometheus-live.test.ts.)
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { repoRoot } from '../helpers/entry.js';
import { alertRules, exportedNames, metricNames, OPS, recordedNames, RULE_FILES, rulesOf } from './promql.js';

const run = promisify(execFile);
const TESTS_DIR = join(OPS, 'prometheus', 'tests');
const testFiles = readdirSync(TESTS_DIR)
  .filter((file) => file.endsWith('.yml'))
  .map((file) => join(TESTS_DIR, file));

/** stdout and stderr of a command, and its exit code (0 when it succeeded). */
async function promtool(...args: string[]) {
  try {
    const { stdout, stderr } = await run('promtool', args, { timeout: 60_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code?: number | string; stdout?: string; stderr?: string };
    if (code === 'ENOENT') throw new Error('promtool is not installed (apt-get install prometheus; .ci/run does)', { cause: error });
    return { code: Number(code ?? 1), output: `${stdout ?? ''}${stderr ?? ''}` };
  }
}

t.test('promtool check rules: every rule file is valid', async (t) => {
  const { code, output } = await promtool('check', 'rules', ...RULE_FILES);
  t.equal(code, 0, output);
  t.equal(output.match(/SUCCESS/g)?.length, RULE_FILES.length, 'SUCCESS for each file');
});

t.test('promtool test rules: every unit test passes', async (t) => {
  t.ok(testFiles.length > 0, `${testFiles.length} test files`);
  const { code, output } = await promtool('test', 'rules', ...testFiles);
  t.equal(code, 0, output);
  t.notMatch(output, /FAILED/, 'nothing failed');
});

t.test('promtool check config: the example scrape configuration, with the rule files', async (t) => {
  const { code, output } = await promtool('check', 'config', join(OPS, 'prometheus', 'prometheus.example.yml'));
  t.equal(code, 0, output);
  t.match(output, new RegExp(`SUCCESS: ${RULE_FILES.length} rule files found`));
});

interface AlertCase {
  eval_time: string;
  alertname: string;
  exp_alerts?: unknown[] | null;
}

// what a test file loads: the hand-written alerts with the recording rules they read, or the
// SLOs' rules, which read only the service's histogram
const LOADS = [['../recording-rules.yml', '../alerts.yml'], ['../slo-rules.yml']];

t.test('every alert has a firing and a non-firing promtool case', async (t) => {
  const cases: AlertCase[] = testFiles.flatMap((file) => {
    const spec = parse(readFileSync(file, 'utf8')) as { rule_files: string[]; tests: { alert_rule_test?: AlertCase[] }[] };
    t.ok(
      LOADS.some((files) => JSON.stringify(files) === JSON.stringify(spec.rule_files)),
      `${file}: loads ${LOADS.map((files) => files.join(' and ')).join(', or ')}`,
    );
    const fileCases = spec.tests.flatMap((test) => test.alert_rule_test ?? []);
    // (promtool finds no alert of a name its files do not define, and calls that "not firing")
    const loaded = new Set(spec.rule_files.flatMap((name) => rulesOf(join(TESTS_DIR, name))).map((rule) => rule.alert));
    t.same(
      fileCases.filter((test) => !loaded.has(test.alertname)).map((test) => test.alertname),
      [],
      `${file}: tests only alerts of the files it loads`,
    );
    return fileCases;
  });
  const alerts = alertRules().map((rule) => rule.alert!);
  t.ok(alerts.length >= 20, `${alerts.length} alerts`);
  for (const alert of alerts) {
    const mine = cases.filter((test) => test.alertname === alert);
    t.ok(
      mine.some((test) => (test.exp_alerts ?? []).length > 0),
      `${alert}: a case where it fires`,
    );
    t.ok(
      mine.some((test) => (test.exp_alerts ?? []).length === 0),
      `${alert}: a case where it does not`,
    );
  }
  t.same(
    cases.filter((test) => !alerts.includes(test.alertname)).map((test) => test.alertname),
    [],
    'no case names an alert that does not exist',
  );
});

t.test('every alert: severity, summary, description, and a runbook section its runbook_url points at', async (t) => {
  const runbooks = readFileSync(join(repoRoot, 'docs', 'runbooks.md'), 'utf8');
  const sections = new Map<string, string>();
  for (const part of runbooks.split(/^## /m).slice(1)) sections.set(part.split('\n')[0]!.trim(), part);
  for (const rule of alertRules()) {
    const alert = rule.alert!;
    t.match(rule.labels?.severity, /^(critical|warning)$/, `${alert}: severity`);
    t.ok(rule.annotations?.summary && rule.annotations.description, `${alert}: summary and description`);
    t.equal(rule.annotations?.runbook_url, `docs/runbooks.md#${alert.toLowerCase()}`, `${alert}: runbook_url names its section`);
    const section = sections.get(alert);
    if (!t.ok(section, `${alert}: docs/runbooks.md has "## ${alert}"`)) continue;
    for (const part of ['What it means', 'What users see', 'What to do']) {
      t.match(section, new RegExp(`\\*\\*${part}\\.?\\*\\*`), `${alert}: "${part}"`);
    }
    for (const name of metricNames(rule.expr)) t.ok(section!.includes(name), `${alert}: the section names ${name}, which it reads`);
  }
  t.same(
    [...sections.keys()].filter((title) => /^Coldtrack/.test(title) && !alertRules().some((rule) => rule.alert === title)),
    [],
    'no runbook section for an alert that does not exist',
  );
});

t.test('the rules read only series the service exports or the recording rules make', async (t) => {
  const known = new Set([...exportedNames(), ...recordedNames(), 'up']);
  for (const rule of RULE_FILES.flatMap(rulesOf)) {
    const names = metricNames(rule.expr);
    t.ok(names.length > 0, `${rule.record ?? rule.alert}: reads ${names.join(', ')}`);
    t.same(
      names.filter((name) => !known.has(name)),
      [],
      `${rule.record ?? rule.alert}: every name known`,
    );
  }
});
