// The project's own SQL as text, read from sql/queries/*.sql (`-- name: x` sections): the
// reference runs the same queries as the project without importing its code.
import { readFileSync } from 'node:fs';

/** The named queries of sql/<folder>/<file>.sql (sql/queries: the project's own). */
function queries(file: string, folder = 'queries'): Map<string, string> {
  const text = readFileSync(new URL(`../../sql/${folder}/${file}.sql`, import.meta.url), 'utf8');
  const found = new Map<string, string>();
  for (const chunk of text.split(/^-- name: */m).slice(1)) {
    const [header = '', ...body] = chunk.split('\n');
    found.set(header.trim(), body.join('\n').trim());
  }
  return found;
}

const sqlOf = (map: Map<string, string>, name: string) => {
  const sql = map.get(name);
  if (!sql) throw new Error(`no query ${name}`);
  return sql;
};

export type ProjectSql = ReturnType<typeof loadProjectSql>;

/** Every query the reference runs; a renamed or missing one fails the worker at start-up. */
export function loadProjectSql() {
  const tokenSql = queries('api-tokens');
  const impact = queries('analytics-impact');
  return {
    tokenForAuth: sqlOf(tokenSql, 'tokenForAuth'),
    listTokens: sqlOf(tokenSql, 'listTokens'),
    countTokens: sqlOf(tokenSql, 'countTokens'),
    insertToken: sqlOf(tokenSql, 'insertToken'),
    tokenById: sqlOf(tokenSql, 'tokenById'),
    userForAuth: sqlOf(queries('employees'), 'userForAuth'),
    liveUnits: sqlOf(queries('unit-access'), 'liveUnitsOfCompany'),
    // users and utilization: the baseline queries of sql/reference/ (the project's now read the
    // page's rows for its own rollups, with parameters a plain handler does not have)
    utilization: sqlOf(queries('analytics-baseline', 'reference'), 'utilization'),
    revenue: sqlOf(queries('analytics-revenue'), 'revenueCheckOuts'),
    users: sqlOf(queries('analytics-baseline', 'reference'), 'usersByPeriod'),
    impactCompany: sqlOf(impact, 'impactCompany'),
    impactCrates: sqlOf(impact, 'impactCrates'),
    impactSurveys: sqlOf(impact, 'impactSurveys'),
    impactFarmers: sqlOf(impact, 'impactFarmers'),
  };
}
