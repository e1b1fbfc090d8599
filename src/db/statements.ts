// Named (prepared) statements for the service's own SQL. PostgreSQL parses, analyses and plans an
// unnamed statement on every execution; a named one is parsed once per connection and its plan
// cached (under plan_cache_mode auto, a generic plan once it is no costlier than the custom ones).
// Only texts registered here are named: the service's queries from sql/queries/ (a fixed, small
// set), never ad-hoc SQL, so a connection holds a bounded number of prepared statements.
import { createHash } from 'node:crypto';

const names = new Map<string, string>();

/** Marks `text` as one of the service's statements (to be prepared on each connection); returns it. */
export function registerStatement(text: string): string {
  if (!names.has(text)) names.set(text, `ct_${createHash('sha1').update(text).digest('base64url').slice(0, 16)}`);
  return text;
}

/** The statement name of a registered text, else undefined (run unnamed). */
export function statementName(text: string): string | undefined {
  return names.get(text);
}
