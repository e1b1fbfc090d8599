// docs/architecture.md is the map a maintainer walks from a URL to its route file, its SQL and its
// tests, and from a folder to what lives there: this keeps it true. The real app is built as
// `npm run generate:client` builds it (in process, on a pool that never connects: routes and the
// OpenAPI document need no database), with an onRoute hook put on it through Fastify's
// 'fastify.initialization' diagnostics channel before any plugin registers a route. So every route
// is seen with the file whose call registered it: the first frame of this repository in the
// registration's stack, or, for a route a library plugin adds (swagger-ui's /docs), that package.
import { execFileSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, RouteOptions } from 'fastify';
import t, { type Test } from 'tap';
import { servedOpenApiDocument } from '../../client/codegen/generate-types.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const THIS_FILE = fileURLToPath(import.meta.url);
const DOC = 'docs/architecture.md';
const doc = readFileSync(join(ROOT, DOC), 'utf8');

/** One assertion per problem, each saying what to add or fix; one passing assertion when none. */
function report(test: Test, problems: string[], fine: string) {
  if (problems.length === 0) test.pass(fine);
  for (const problem of problems) test.fail(problem);
}

// ---------------------------------------------------------------------------------------------
// What the service serves: every route Fastify registers, and every operation of /openapi.json

/** Who registered a route: a file of this repository, or a library plugin (npm package). */
type Registrar = { file: string } | { package: string };

/** The package a node_modules path belongs to (`@scope/name` or `name`). */
function packageOf(path: string): string {
  const [first, second] = path.slice(path.lastIndexOf('/node_modules/') + '/node_modules/'.length).split('/');
  return first!.startsWith('@') ? `${first}/${second}` : first!;
}

/** Fastify's own frames (and avvio's, which runs plugins) say nothing about who registered. */
const FRAMEWORK = new Set(['fastify', 'avvio']);

function registrarOf(stack: string): Registrar {
  let library: string | null = null;
  for (const line of stack.split('\n').slice(1)) {
    const location = /\((.+):\d+:\d+\)$/.exec(line) ?? /at (\S+):\d+:\d+$/.exec(line);
    if (!location) continue;
    const path = location[1]!.startsWith('file://') ? fileURLToPath(location[1]!) : location[1]!;
    if (path.includes('/node_modules/')) {
      const name = packageOf(path);
      if (!library && !FRAMEWORK.has(name)) library = name;
    } else if (path !== THIS_FILE && path.startsWith(ROOT)) {
      return { file: relative(ROOT, path) };
    }
  }
  return { package: library ?? 'an unknown module' };
}

/** A URL as GET /openapi.json and the table write it: `:token_id` becomes `{token_id}`. */
const tableUrl = (url: string) => url.replace(/:(\w+)(\([^)]*\))?/g, '{$1}');

interface Route {
  method: string;
  url: string;
  hidden: boolean;
  registrar: Registrar;
}

const registered: Route[] = [];
const onInitialization = (message: unknown) => {
  const { fastify } = message as { fastify: FastifyInstance };
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = Infinity;
    const stack = new Error().stack ?? '';
    Error.stackTraceLimit = limit;
    const hidden = Boolean((route.schema as { hide?: boolean } | undefined)?.hide);
    for (const method of [route.method].flat()) {
      registered.push({ method, url: tableUrl(route.url), hidden, registrar: registrarOf(stack) });
    }
  });
};
subscribe('fastify.initialization', onInitialization);
let openApi: Record<string, unknown>;
try {
  openApi = await servedOpenApiDocument();
} finally {
  unsubscribe('fastify.initialization', onInitialization);
}

const withoutSlash = (url: string) => (url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url);
const gets = new Set(registered.filter((route) => route.method === 'GET').map((route) => withoutSlash(route.url)));
/** The routes to account for: Fastify adds a HEAD beside every GET (exposeHeadRoutes), not a row's worth. */
const routes = registered.filter((route) => route.method !== 'HEAD' || !gets.has(withoutSlash(route.url)));

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const documented = new Set(
  Object.entries(openApi.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => HTTP_METHODS.includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  ),
);

// ---------------------------------------------------------------------------------------------
// The document: its sections, the route table, the tree

function section(title: string): string {
  const start = doc.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`${DOC} has no "## ${title}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

const TABLE_HEADER = '| Method | URL | In /openapi.json | Route file | SQL | Tests |';

interface Row {
  line: number;
  method: string;
  url: string;
  inOpenApi: string;
  routeFiles: string[];
  sql: string[];
  tests: string[];
}

const lineOf = (text: string) => doc.slice(0, doc.indexOf(text)).split('\n').length;

/** The route table's rows; problems with its shape go to `problems`. */
function routeTable(problems: string[]): Row[] {
  const lines = section('Route table').split('\n');
  const headerAt = lines.findIndex((line) => line.trim() === TABLE_HEADER);
  if (headerAt < 0) {
    problems.push(`${DOC}, "## Route table": the table's header must read exactly: ${TABLE_HEADER}`);
    return [];
  }
  const rows: Row[] = [];
  for (const text of lines.slice(headerAt + 2)) {
    if (!text.startsWith('|')) break;
    const where = `${DOC}:${lineOf(text)}`;
    const cells = text
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.length !== 6) {
      problems.push(
        `${where}: a row has ${cells.length} cells, the table 6 (method, URL, in /openapi.json, route file, SQL, tests): ${text}`,
      );
      continue;
    }
    const column = (index: number, name: string) => {
      const cell = cells[index]!;
      if (cell === '-') return [];
      const paths = [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
      if (paths.length === 0 || cell.replace(/`[^`]+`/g, '').replace(/[\s,]/g, '') !== '') {
        problems.push(`${where}: the ${name} cell must be backticked paths separated by commas, or -: "${cell}"`);
      }
      return paths;
    };
    const urls = column(1, 'URL');
    if (urls.length !== 1) problems.push(`${where}: the URL cell must be one backticked URL: "${cells[1]}"`);
    rows.push({
      line: lineOf(text),
      method: cells[0]!,
      url: urls[0] ?? '',
      inOpenApi: cells[2]!,
      routeFiles: column(3, 'route file'),
      sql: column(4, 'SQL'),
      tests: column(5, 'tests'),
    });
  }
  return rows;
}

interface TreeEntry {
  line: number;
  path: string;
  folder: boolean;
  description: string;
}

/** The entries of the tree drawn in "## The tree" (its ```text block), as paths from the root. */
function tree(problems: string[]): TreeEntry[] {
  const block = /```text\n([\s\S]*?)```/.exec(section('The tree'))?.[1];
  if (!block) {
    problems.push(`${DOC}, "## The tree": draw the tree in a \`\`\`text block`);
    return [];
  }
  const lines = block.split('\n').filter((line) => line.trim() !== '');
  const entries: TreeEntry[] = [];
  const ancestors: string[] = [];
  for (const text of lines.slice(1)) {
    const match = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: {2,}(\S.*))?$/.exec(text);
    if (!match) {
      problems.push(
        `${DOC}:${lineOf(text)}: not a tree line ("│   " or "    " per level, then "├── " or "└── ", the name, two spaces, what lives there): ${text}`,
      );
      continue;
    }
    const depth = match[1]!.length / 4;
    const name = match[2]!;
    ancestors.length = depth;
    const path = [...ancestors, name].join('');
    ancestors.push(name.endsWith('/') ? name : `${name}/`);
    entries.push({ line: lineOf(text), path: path.replace(/\/$/, ''), folder: name.endsWith('/'), description: match[3] ?? '' });
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// The repository as git sees it: tracked files and new ones, never what .gitignore leaves out

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file !== '' && existsSync(join(ROOT, file)));
const folders = new Set(
  files.flatMap((file) =>
    file
      .split('/')
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
  ),
);
const fileSet = new Set(files);

/**
 * Whether a file registers a library plugin's routes: it imports the package, or a package that
 * depends on it (@fastify/swagger-ui registers @fastify/static for its assets).
 */
function registersLibrary(file: string, registrar: string): boolean {
  const source = readFileSync(join(ROOT, file), 'utf8');
  const imported = [...source.matchAll(/from '((?:@[^/']+\/)?[^./'][^/']*)/g)].map((match) => match[1]!);
  return imported.some((name) => {
    if (name === registrar) return true;
    const manifest = join(ROOT, 'node_modules', name, 'package.json');
    if (!existsSync(manifest)) return false;
    const { dependencies = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> };
    return registrar in dependencies;
  });
}

const isFile = (path: string) => existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile();

// ---------------------------------------------------------------------------------------------

t.test('the app and the document were read', async (t) => {
  t.ok(routes.length >= 20, `${routes.length} routes registered`);
  t.ok(documented.size >= 10, `${documented.size} operations in /openapi.json`);
  t.ok(
    routes.some((route) => 'file' in route.registrar),
    'routes are traced to the files that register them',
  );
});

const tableProblems: string[] = [];
const rows = routeTable(tableProblems);
const rowByKey = new Map<string, Row>();
for (const row of rows) {
  const key = `${row.method} ${row.url}`;
  if (rowByKey.has(key))
    tableProblems.push(`${DOC}:${row.line}: ${key} has a second row (first at line ${rowByKey.get(key)!.line}): keep one`);
  else rowByKey.set(key, row);
}
/** A route's row: its own, or the row of its URL without the trailing slash (`/console/` is `/console`'s). */
const rowOf = (method: string, url: string) => rowByKey.get(`${method} ${url}`) ?? rowByKey.get(`${method} ${withoutSlash(url)}`);

t.test('the route table can be read', async (t) => {
  t.ok(rows.length >= 20, `${rows.length} rows`);
  report(t, tableProblems, 'every row has six cells of backticked paths or -, and no route has two rows');
});

t.test('every route the service registers, and every operation of /openapi.json, has a row', async (t) => {
  const problems: string[] = [];
  for (const route of routes) {
    if (rowOf(route.method, route.url)) continue;
    const file = 'file' in route.registrar ? `\`${route.registrar.file}\`` : `(the file that registers ${route.registrar.package})`;
    problems.push(
      `${route.method} ${route.url} has no row in the route table of ${DOC}: add ` +
        `| ${route.method} | \`${route.url}\` | ${documented.has(`${route.method} ${route.url}`) ? 'yes' : 'no'} | ${file} | <sql/queries/... or -> | <its test files> |`,
    );
  }
  const served = new Set(routes.map((route) => `${route.method} ${route.url}`));
  for (const operation of documented) {
    // a served route without a row is reported above, with the row to add
    if (!served.has(operation) && !rowByKey.has(operation))
      problems.push(`${operation} is in GET /openapi.json but has no row in the route table of ${DOC}: add one`);
  }
  report(t, problems, `${routes.length} routes and ${documented.size} documented operations, each with its row`);
});

t.test('every row names a route that exists, registered by its route file', async (t) => {
  const problems: string[] = [];
  for (const row of rows) {
    const where = `${DOC}:${row.line}, ${row.method} ${row.url}`;
    const served = routes.filter((route) => route.method === row.method && (route.url === row.url || withoutSlash(route.url) === row.url));
    if (served.length === 0) {
      problems.push(
        `${where}: the service registers no such route (methods are upper case, parameters {like_this}): fix the method or URL, or remove the row`,
      );
      continue;
    }
    const inOpenApi = documented.has(`${row.method} ${row.url}`) ? 'yes' : 'no';
    if (row.inOpenApi !== inOpenApi) problems.push(`${where}: "In /openapi.json" must be ${inOpenApi}, not "${row.inOpenApi}"`);
    if (row.routeFiles.length !== 1) {
      problems.push(`${where}: name exactly one route file`);
      continue;
    }
    const routeFile = row.routeFiles[0]!;
    if (!isFile(routeFile)) continue; // reported with the other missing files
    for (const route of served) {
      const by = route.registrar;
      if ('file' in by) {
        if (by.file !== routeFile)
          problems.push(
            `${where}: the route file is \`${by.file}\` (its call registers ${route.method} ${route.url}), not \`${routeFile}\``,
          );
      } else if (!registersLibrary(routeFile, by.package)) {
        problems.push(
          `${where}: ${by.package} registers this route, and \`${routeFile}\` imports neither it nor a package that depends on it: name the file that registers ${by.package}`,
        );
      }
    }
  }
  report(t, problems, `${rows.length} rows, each a served route in the file that registers it`);
});

t.test("every file a row names exists, in its column's place", async (t) => {
  const problems: string[] = [];
  for (const row of rows) {
    const where = `${DOC}:${row.line}, ${row.method} ${row.url}`;
    const check = (paths: string[], column: string, place: RegExp, placeText: string) => {
      for (const path of paths) {
        if (!isFile(path)) problems.push(`${where}: the ${column} \`${path}\` does not exist: fix the path, or remove it from the row`);
        else if (!place.test(path)) problems.push(`${where}: the ${column} \`${path}\` is not ${placeText}`);
      }
    };
    check(row.routeFiles, 'route file', /^src\/.+\.ts$/, 'a .ts file under src/');
    check(row.sql, 'SQL file', /^sql\/queries\/[^/]+\.sql$/, 'a file of sql/queries/');
    check(row.tests, 'test file', /^test\/.+\.test\.ts$/, 'a test/**/*.test.ts file');
    if (row.inOpenApi === 'yes' && row.tests.length === 0)
      problems.push(`${where}: a documented operation needs its tests: name them (CONTRIBUTING.md, "Adding an endpoint")`);
  }
  report(t, problems, 'every route file, SQL file and test file named in the table exists');
});

t.test('every query file and every route test is placed on the map', async (t) => {
  const problems: string[] = [];
  for (const file of files.filter((path) => /^sql\/queries\/[^/]+\.sql$/.test(path))) {
    if (!doc.includes(`\`${file}\``))
      problems.push(`\`${file}\` is named nowhere in ${DOC}: add it to the SQL cell of the routes that run it, or to "SQL behind no URL"`);
  }
  for (const file of files.filter((path) => /^test\/routes\/.+\.test\.ts$/.test(path))) {
    if (!doc.includes(`\`${file}\``))
      problems.push(`\`${file}\` is named nowhere in ${DOC}: add it to the Tests cell of its route's row, or to "Tests across routes"`);
  }
  report(t, problems, 'every sql/queries/ file and every test/routes/ test is in the document');
});

t.test('the tree draws every folder that exists, and nothing that does not', async (t) => {
  const problems: string[] = [];
  const entries = tree(problems);
  t.ok(entries.length >= 50, `${entries.length} entries in the tree`);
  const drawn = new Map(entries.map((entry) => [entry.path, entry]));
  for (const entry of entries) {
    const where = `${DOC}:${entry.line}`;
    if (entry.folder ? !folders.has(entry.path) : !fileSet.has(entry.path)) {
      problems.push(
        `${where}: the tree draws ${entry.path}${entry.folder ? '/' : ''}, which is not in the repository: remove its line or fix its name`,
      );
    }
    if (entry.description === '')
      problems.push(`${where}: ${entry.path} needs one line saying what lives there, two spaces after its name`);
  }
  // what must be drawn: every top-level folder and file, every folder of src/ (any depth) and every
  // file directly in src/, and the first level of folders inside the other top-level folders
  const required = [
    ...[...folders]
      .filter((folder) => !folder.includes('/') || folder.startsWith('src/') || folder.split('/').length === 2)
      .map((path) => ({ path, folder: true })),
    ...files.filter((file) => !file.includes('/') || /^src\/[^/]+$/.test(file)).map((path) => ({ path, folder: false })),
  ];
  for (const { path, folder } of required) {
    if (drawn.has(path)) continue;
    const parent = path.includes('/') ? `under ${path.slice(0, path.lastIndexOf('/'))}/` : 'at the top level';
    problems.push(`the tree in ${DOC} omits ${path}${folder ? '/' : ''}: add a line for it ${parent}, with what lives there`);
  }
  report(t, problems, `${required.length} required folders and files drawn, and everything drawn exists`);
});

// ---------------------------------------------------------------------------------------------
// What workers/ may import of src/ ("Words with one meaning", Rollup thread)

/** The one import from workers/ into src/: the rollup thread opens its connections as the service does. */
const WORKERS_INTO_SRC = new Map([['workers/rollup-thread.ts', 'src/db/pool.ts']]);
/** What the file workers/ imports may itself import of the project: src/db/ only, never the config or the app. */
const POOL_STAYS_IN = 'src/db/';

/** The project files a source file imports (static, type-only, re-exports and dynamic), as paths from the root. */
function projectImports(file: string): string[] {
  const source = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(ROOT, join(ROOT, file, '..', specifier)).replace(/\.js$/, '.ts'));
}

t.test('workers/ imports nothing of src/ but the rollup thread its pool, and the pool stays in src/db/', async (t) => {
  const problems: string[] = [];
  const workerFiles = files.filter((file) => /^workers\/.+\.ts$/.test(file));
  t.ok(workerFiles.length >= 10, `${workerFiles.length} files under workers/`);
  for (const file of workerFiles) {
    for (const target of projectImports(file)) {
      if (target.startsWith('src/') && WORKERS_INTO_SRC.get(file) !== target)
        problems.push(`${file} imports ${target}: workers/ imports nothing of src/ but what ${DOC}, "Words with one meaning", allows`);
    }
  }
  const seen = new Set<string>();
  const toVisit = [...WORKERS_INTO_SRC.values()];
  while (toVisit.length > 0) {
    const file = toVisit.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.startsWith(POOL_STAYS_IN)) {
      problems.push(`${file} is loaded on a rollup thread through src/db/pool.ts: keep what the pool imports inside ${POOL_STAYS_IN}`);
      continue;
    }
    toVisit.push(...projectImports(file));
  }
  for (const [file, target] of WORKERS_INTO_SRC) {
    if (!doc.includes(`\`${target}\`, and only from \`${file}\``))
      problems.push(`${DOC}, "Words with one meaning": say that \`${file}\` imports \`${target}\` of src/, and why`);
  }
  report(t, problems, `workers/ reaches src/ only through ${[...WORKERS_INTO_SRC.values()].join(', ')}, which stays in ${POOL_STAYS_IN}`);
});
