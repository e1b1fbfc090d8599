// The pattern README.md, docs/partners.md and docs/operations.md give secret scanners (the one registered
// with GitHub's secret scanning) is the token format of src/tokens/format.ts: it finds every
// token the service issues wherever it sits in a file, whole, and nothing a character longer.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { generateToken } from '../../src/tokens/format.js';

const DOCUMENTED = '\\bctk_[0-9A-Za-z]{49}\\b';
const docs = ['README.md', 'docs/partners.md', 'docs/operations.md'].map((path) => [
  path,
  readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'),
]);

t.test('the docs give one pattern, the same everywhere', async (t) => {
  for (const [path, text] of docs) {
    const given = [...text!.matchAll(/`(\\bctk_[^`]*)`/g)].map((match) => match[1]);
    t.ok(given.length > 0, `${path} gives the pattern`);
    for (const pattern of given) t.equal(pattern, DOCUMENTED, `${path}: ${pattern}`);
  }
});

t.test('it finds every issued token, whole, wherever it sits', async (t) => {
  const pattern = new RegExp(DOCUMENTED, 'g');
  for (let i = 0; i < 200; i++) {
    const token = generateToken();
    const places = [token, `COLDTRACK_TOKEN=${token}\n`, `"token": "${token}",`, `Authorization: Bearer ${token}`, `'${token}'`];
    for (const place of places) t.same(place.match(pattern), [token], `found in ${JSON.stringify(place.slice(0, 24))}...`);
    t.same(`${token}x`.match(pattern), null, 'a character more: not a token');
    t.same(token.slice(0, -1).match(pattern), null, 'a character less: not a token');
  }
});
