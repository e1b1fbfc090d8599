// The real entry point (src/main.ts) with a JWT_PUBLIC_KEY it cannot verify with: exit code 1
// and exactly one stderr line, `Invalid configuration: JWT_PUBLIC_KEY ...`, no stack trace and no
// key material, before it touches the database.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { nodeArgs } from '../helpers/entry.js';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runServer(env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs('src/main.ts'), {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server still running after 30 s:\n${stdout}${stderr}`));
    }, 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const pem = (pair: { publicKey: { export(options: { type: 'spki'; format: 'pem' }): string | Buffer } }) =>
  pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const cases: Array<[string, string, RegExp]> = [
  ['a P-384 key', pem(generateKeyPairSync('ec', { namedCurve: 'P-384' })), /EC key on curve secp384r1/],
  ['an Ed25519 key', pem(generateKeyPairSync('ed25519')), /ed25519 key/],
  ['a garbage PEM', '-----BEGIN PUBLIC KEY-----\nZ2FyYmFnZQ==\n-----END PUBLIC KEY-----\n', /not a readable PEM public key/],
  ['a private key pasted by mistake', p256.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), /a public key is expected/],
];

// DATABASE_URL points nowhere: configuration is refused before any connection is tried
const DATABASE_URL = 'postgres://nobody@127.0.0.1:1/nothing';

const runs = cases.map(([, key]) => runServer({ DATABASE_URL, JWT_PUBLIC_KEY: key }));

for (const [index, [label, key, message]] of cases.entries()) {
  t.test(`JWT_PUBLIC_KEY holding ${label}`, async (t) => {
    const { code, stdout, stderr } = await runs[index]!;
    t.equal(code, 1, 'exit code 1');
    t.equal(stdout, '', 'nothing on stdout');
    const lines = stderr.split('\n').filter((line) => line !== '');
    t.equal(lines.length, 1, `exactly one stderr line (got: ${JSON.stringify(stderr.slice(0, 400))})`);
    t.match(lines[0], /^Invalid configuration: JWT_PUBLIC_KEY /);
    t.match(lines[0], message);
    t.notMatch(stderr, /^\s+at /m, 'no stack trace');
    const body = key.split('\n').filter((line) => line.length > 16 && !line.startsWith('-----'));
    t.notOk(
      body.some((line) => stderr.includes(line.slice(0, 16))),
      'no key material',
    );
  });
}
