// Token format: `ctk_` + 43 base62 characters of CSPRNG output + a 6-character base62 CRC32. The
// checksum must reject any single mistyped character before a lookup; only SHA-256 is stored.
import { createHash } from 'node:crypto';
import t from 'tap';
import { generateToken, hashToken, isWellFormedToken, TOKEN_LIKE, TOKEN_PREFIX } from '../../src/tokens/format.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LENGTH = 4 + 43 + 6;

t.test('shape: prefix ctk_, 53 characters, base62 after the prefix', async (t) => {
  t.equal(TOKEN_PREFIX, 'ctk_');
  for (let i = 0; i < 200; i++) {
    const token = generateToken();
    if (!/^ctk_[0-9A-Za-z]{49}$/.test(token) || token.length !== LENGTH || !isWellFormedToken(token)) {
      t.fail(`bad token ${token}`);
      return;
    }
  }
  t.pass('200 tokens of the right shape that pass their own checksum');
});

t.test('randomness: no repeats, every base62 character in use, no fixed positions', async (t) => {
  const tokens = Array.from({ length: 2000 }, generateToken);
  t.equal(new Set(tokens).size, tokens.length, '2000 distinct tokens');
  const secrets = tokens.map((token) => token.slice(4, 47));
  const used = new Set(secrets.join(''));
  t.equal(used.size, 62, 'all 62 characters appear in the secret part');
  // 43 base62 digits carry log2(62^43) ≈ 256 bits; every position but the first varies fully
  for (let position = 1; position < 43; position++) {
    const column = new Set(secrets.map((secret) => secret[position]));
    if (column.size < 50) t.fail(`position ${position} uses only ${column.size} characters`);
  }
  const first = new Set(secrets.map((secret) => secret[0]));
  t.ok(first.size >= 40, `the leading digit varies too (${first.size} values)`);
  const checksums = new Set(tokens.map((token) => token.slice(-6)));
  t.ok(checksums.size > 1990, 'checksums differ between tokens');
});

t.test('the checksum catches every single-character change, at every position', async (t) => {
  const failures: string[] = [];
  let checked = 0;
  for (let sample = 0; sample < 5; sample++) {
    const token = generateToken();
    for (let position = 0; position < token.length; position++) {
      for (const replacement of ALPHABET + '_') {
        if (replacement === token[position]) continue;
        const mistyped = token.slice(0, position) + replacement + token.slice(position + 1);
        checked += 1;
        if (isWellFormedToken(mistyped)) failures.push(`${token} -> ${mistyped} (position ${position})`);
      }
    }
  }
  t.strictSame(failures, [], `${checked} single-character changes, none accepted`);
  t.ok(checked > 5 * LENGTH * 60, 'every position, every other character');
});

t.test('the checksum catches swapped neighbours, dropped and doubled characters', async (t) => {
  const failures: string[] = [];
  for (let sample = 0; sample < 20; sample++) {
    const token = generateToken();
    for (let position = 4; position < token.length - 1; position++) {
      if (token[position] === token[position + 1]) continue;
      const swapped = token.slice(0, position) + token[position + 1] + token[position] + token.slice(position + 2);
      if (isWellFormedToken(swapped)) failures.push(`swap at ${position}: ${swapped}`);
    }
    for (let position = 4; position < token.length; position++) {
      const dropped = token.slice(0, position) + token.slice(position + 1);
      const doubled = token.slice(0, position) + token[position] + token.slice(position);
      if (isWellFormedToken(dropped)) failures.push(`drop at ${position}`);
      if (isWellFormedToken(doubled)) failures.push(`double at ${position}`);
    }
  }
  t.strictSame(failures, []);
});

t.test('a made-up token of the right shape fails the checksum (almost always)', async (t) => {
  let accepted = 0;
  const trials = 20_000;
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < trials; i++) {
    let body = '';
    for (let j = 0; j < 49; j++) body += ALPHABET[next() % 62];
    if (isWellFormedToken(`ctk_${body}`)) accepted += 1;
  }
  t.ok(accepted <= 1, `${accepted} of ${trials} random strings accepted (CRC32: about 1 in 4 billion)`);
});

t.test('isWellFormedToken rejects garbage', async (t) => {
  const token = generateToken();
  const garbage = [
    '',
    'ctk_',
    'ctk',
    token.slice(4),
    `CTK_${token.slice(4)}`,
    `xtk_${token.slice(4)}`,
    `ctk-${token.slice(4)}`,
    `${token}0`,
    token.slice(0, -1),
    ` ${token}`,
    `${token} `,
    `${token}\n`,
    `\n${token}`,
    `${token}\u0000`,
    `Bearer ${token}`,
    token.replace(/[0-9A-Za-z]$/, '-'),
    token.replace(/^ctk_./, 'ctk_+'),
    token.replace(/^ctk_./, 'ctk_/'),
    token.replace(/^ctk_./, 'ctk_='),
    token.replace(/^ctk_./, 'ctk_\u0410'), // Cyrillic А
    token.replace(/^ctk_./, 'ctk_\uff10'), // fullwidth 0
    `ctk_${'0'.repeat(49)}`,
    `ctk_${'z'.repeat(49)}`,
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig',
    'ctk_' + 'A'.repeat(10_000),
    token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase(),
  ];
  for (const candidate of garbage) {
    t.equal(isWellFormedToken(candidate), false, JSON.stringify(candidate.slice(0, 60)));
  }
});

t.test('hashToken is SHA-256 of the whole token, as 32 raw bytes', async (t) => {
  t.equal(hashToken('abc').toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'FIPS 180-2 test vector');
  t.equal(hashToken('').toString('hex'), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'empty string');
  const token = generateToken();
  const digest = hashToken(token);
  t.ok(Buffer.isBuffer(digest));
  t.equal(digest.length, 32);
  t.strictSame(digest, createHash('sha256').update(token, 'utf8').digest());
  t.notOk(hashToken(token.slice(4)).equals(digest), 'the prefix is part of the hashed value');
  t.notOk(hashToken(token.slice(0, -6)).equals(digest), 'so is the checksum');
  t.notOk(digest.toString('latin1').includes(token.slice(4, 12)), 'the digest does not contain the secret');
});

t.test('TOKEN_LIKE finds a token inside any text (for log redaction)', async (t) => {
  const token = generateToken();
  const text = `GET /x?token=${token}&y=1 "${token}" ${token}`;
  t.equal(text.match(TOKEN_LIKE)?.length, 3);
  t.notOk(text.replace(TOKEN_LIKE, 'ctk_[REDACTED]').includes(token.slice(4, 12)));
});
