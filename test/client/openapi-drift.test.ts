// client/src/openapi.ts is what `npm run generate:client` makes of the document the service serves
// now: regenerated in memory, it must equal the committed file, so a route schema that changes
// without regenerating fails here (and the client's types would lie). The client stands alone:
// no file of it imports the service's code, and `@coldtrack/client` resolves to its build.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { GENERATED_FILE, generateClientTypes, servedOpenApiDocument } from '../../client/codegen/generate-types.js';
import { DATA_PATHS, SENSOR_BULK_PATH, SENSOR_CHANGES_PATH } from '@coldtrack/client';

const clientDir = fileURLToPath(new URL('../../client/', import.meta.url));

t.test("the committed client/src/openapi.ts is the served document's", async (t) => {
  const regenerated = await generateClientTypes();
  const committed = readFileSync(GENERATED_FILE, 'utf8');
  if (regenerated !== committed) {
    const a = committed.split('\n');
    const b = regenerated.split('\n');
    const line = a.findIndex((text, i) => text !== b[i]);
    t.fail(
      `client/src/openapi.ts is stale from line ${line + 1} (committed: ${JSON.stringify(a[line])}, served: ${JSON.stringify(b[line])}): run npm run generate:client`,
    );
  } else {
    t.pass('identical');
  }
});

t.test('the client offers every data endpoint of the document', async (t) => {
  const document = (await servedOpenApiDocument()) as {
    paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
  };
  const tokenRoutes = Object.entries(document.paths)
    .filter(([, item]) => item.get?.security?.some((scheme) => 'apiToken' in scheme))
    .map(([path]) => path)
    .sort();
  t.same(
    [...Object.values(DATA_PATHS), SENSOR_CHANGES_PATH, SENSOR_BULK_PATH].sort(),
    tokenRoutes,
    `every GET behind an API token: ${tokenRoutes.join(', ')}`,
  );
});

t.test('no file of the client imports the service (only its code generator does)', async (t) => {
  const files = (function walk(dir: string): string[] {
    return readdirSync(dir).flatMap((name) =>
      statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : name.endsWith('.ts') ? [join(dir, name)] : [],
    );
  })(join(clientDir, 'src'));
  t.ok(files.length >= 8, `${files.length} files`);
  for (const file of files) {
    const imports = [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((match) => match[1]!);
    const outside = imports.filter((source) => source.startsWith('.') && !join(file, '..', source).startsWith(clientDir));
    const packages = imports.filter((source) => !source.startsWith('.') && !source.startsWith('node:'));
    t.same([...outside, ...packages], [], `${relative(clientDir, file)}: only the client's own files and node: built-ins`);
  }
});

t.test("@coldtrack/client resolves through the workspace to the package's build", async (t) => {
  const specifier = '@coldtrack/client';
  t.equal(import.meta.resolve(specifier), new URL('dist/index.js', `file://${clientDir}`).href);
  const module = (await import(specifier)) as typeof import('@coldtrack/client');
  t.type(module.ColdtrackClient, 'function');
});
