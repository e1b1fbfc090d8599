// Named queries from sql/queries/*.sql. A file holds several queries, each introduced by a
// `-- name: queryName` line, so SQL stays SQL (readable, diffable) and is read once at start-up.
import { readdirSync, readFileSync } from 'node:fs';
import { labelQuery } from './query-tracing.js';
import { registerStatement } from './statements.js';

const queriesDir = new URL('../../sql/queries/', import.meta.url);

/**
 * `prepared: false` keeps a file's queries unnamed (src/db/statements.ts): for queries whose
 * execution dwarfs their planning and whose best plan depends on the parameters' sizes, where a
 * generic plan chosen from small pages would then serve large ones (bench/analytics-scale.ts:
 * utilization's month pages took 383-408 ms prepared against 204 ms planned per call).
 */
export function loadQueries<Name extends string>(file: string, names: readonly Name[], { prepared = true } = {}): Record<Name, string> {
  const found = queriesInFile(file);
  const queries = {} as Record<Name, string>;
  for (const name of names) {
    const sql = found.get(name);
    if (!sql) throw new Error(`sql/queries/${file}.sql has no query named ${name}`);
    queries[name] = prepared ? registerStatement(sql) : sql;
    labelQuery(sql, `${file}.${name}`); // the span name of the query (src/db/query-tracing.ts)
  }
  return queries;
}

/** The queries of sql/queries/<file>.sql, by name. */
export function queriesInFile(file: string): Map<string, string> {
  const text = readFileSync(new URL(`${file}.sql`, queriesDir), 'utf8');
  const found = new Map<string, string>();
  for (const chunk of text.split(/^-- name: */m).slice(1)) {
    const [header = '', ...body] = chunk.split('\n');
    found.set(header.trim(), body.join('\n').trim());
  }
  return found;
}

/** The files of sql/queries/, without their .sql (for tools that look across every query). */
export function queryFiles(): string[] {
  return readdirSync(queriesDir)
    .filter((name) => name.endsWith('.sql'))
    .map((name) => name.slice(0, -'.sql'.length));
}
