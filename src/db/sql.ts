// Named queries from sql/queries/*.sql. A file holds several queries, each introduced by a
// `-- name: queryName` line, so SQL stays SQL (readable, diffable) and is read once at start-up.
import { readFileSync } from 'node:fs';
import { registerStatement } from './statements.js';

const queriesDir = new URL('../../sql/queries/', import.meta.url);

export function loadQueries<Name extends string>(file: string, names: readonly Name[]): Record<Name, string> {
  const text = readFileSync(new URL(`${file}.sql`, queriesDir), 'utf8');
  const found = new Map<string, string>();
  for (const chunk of text.split(/^-- name: */m).slice(1)) {
    const [header = '', ...body] = chunk.split('\n');
    found.set(header.trim(), body.join('\n').trim());
  }
  const queries = {} as Record<Name, string>;
  for (const name of names) {
    const sql = found.get(name);
    if (!sql) throw new Error(`sql/queries/${file}.sql has no query named ${name}`);
    queries[name] = registerStatement(sql);
  }
  return queries;
}
