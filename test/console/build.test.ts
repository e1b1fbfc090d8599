// The console the service serves is the committed build in console/build/ (no build step before
// `npm start`). This fails when that build is stale: the source is rebuilt into a temporary folder
// and compared file by file. It also holds the first load's budget (gzip JS+CSS under 100 KB) and
// the page's shape under its CSP: no inline script or style, every asset a file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { build } from 'vite';

const COMMITTED = 'console/build';
const BUDGET_BYTES = 100 * 1024;

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();

t.test('the committed build is what the source builds to (else: npm run build:console)', async (t) => {
  const fresh = mkdtempSync(join(tmpdir(), 'console-build-'));
  t.teardown(() => rmSync(fresh, { recursive: true, force: true }));
  await build({ configFile: 'console/vite.config.ts', logLevel: 'silent', build: { outDir: fresh, emptyOutDir: true } });
  const stale = 'console/build/ is stale: run `npm run build:console` and commit console/build/';
  t.strictSame(files(COMMITTED), files(fresh), `the same files (${stale})`);
  for (const name of files(fresh)) {
    t.ok(readFileSync(join(fresh, name)).equals(readFileSync(join(COMMITTED, name))), `${name} is identical (${stale})`);
  }
});

t.test('first load: JS + CSS under 100 KB gzip; no inline code for the CSP to refuse', async (t) => {
  const page = readFileSync(join(COMMITTED, 'index.html'), 'utf8');
  const referenced = [...page.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.(?:js|css))"/g)].map((match) => match[1]!);
  t.ok(
    referenced.some((name) => name.endsWith('.js')) && referenced.some((name) => name.endsWith('.css')),
    `the page loads ${referenced.join(', ')}`,
  );
  t.strictSame(
    files(join(COMMITTED, 'assets'))
      .map((name) => `assets/${name}`)
      .sort(),
    [...referenced].sort(),
    'and nothing else is built',
  );
  let total = 0;
  for (const name of referenced) {
    const size = gzipSync(readFileSync(join(COMMITTED, name))).length;
    t.comment(`${name}: ${size} bytes gzip`);
    total += size;
  }
  t.comment(`first load, JS + CSS: ${total} bytes gzip (budget ${BUDGET_BYTES})`);
  t.ok(total < BUDGET_BYTES, `${total} bytes gzip < ${BUDGET_BYTES}`);
  t.notMatch(page, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  t.notMatch(page, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or event handler attribute');
});
