// The project's own SQL as text, read from sql/queries/*.sql (`-- name: x` sections): the
// reference runs the same queries as the project without importing its code.
import { readFileSync } from 'node:fs';

/** The named queries of a `-- name: x` SQL file: the project's own (sql/queries/<file>.sql) by default. */
function queries(file: string, at = new URL(`../../sql/queries/${file}.sql`, import.meta.url)): Map<string, string> {
  const text = readFileSync(at, 'utf8');
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
    liveUnits: sqlOf(queries('company-units'), 'liveUnitsOfCompany'),
    // users and utilization: the baseline queries beside this file (the project's now read the
    // page's rows for its own rollups, with parameters a plain handler does not have)
    utilization: sqlOf(queries('analytics-baseline', new URL('./analytics-baseline.sql', import.meta.url)), 'utilization'),
    revenue: sqlOf(queries('analytics-revenue'), 'revenueCheckOuts'),
    users: sqlOf(queries('analytics-baseline', new URL('./analytics-baseline.sql', import.meta.url)), 'usersByPeriod'),
    impactCompany: sqlOf(impact, 'impactCompany'),
    impactCrates: sqlOf(impact, 'impactCrates'),
    impactSurveys: sqlOf(impact, 'impactSurveys'),
    impactFarmers: sqlOf(impact, 'impactFarmers'),
  };
}
