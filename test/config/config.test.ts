// Configuration: every bad or missing value stops start-up with one line naming the variable.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { ConfigError, heapFlags, loadConfig, mallocEnv } from '../../src/config.js';
import { nodeArgs } from '../helpers/entry.js';

const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', JWT_SECRET: 'x'.repeat(32) };

t.test('defaults with a database URL', async (t) => {
  const config = loadConfig(base);
  t.equal(config.host, '0.0.0.0');
  t.equal(config.port, 3000);
  t.equal(config.workers, 1, 'one worker without Redis');
  t.same(config.trustProxy, []);
  t.same(config.jwt, { kind: 'secret', secret: 'x'.repeat(32) });
});

t.test('no configuration at all is the embedded mode', async (t) => {
  const config = loadConfig({});
  t.equal(config.databaseUrl, null);
  t.equal(config.host, '127.0.0.1');
  t.equal(config.jwt, null, 'the embedded start-up makes its own secret');
});

t.test('workers default to the CPU count with Redis', async (t) => {
  const config = loadConfig({ ...base, REDIS_URL: 'redis://127.0.0.1:6379' });
  t.ok(config.workers >= 1);
  t.equal(loadConfig({ ...base, REDIS_URL: 'redis://127.0.0.1:6379', WORKERS: '3' }).workers, 3);
});

const bad: Array<[Record<string, string>, string]> = [
  [{ ...base, PORT: 'abc' }, 'PORT'],
  [{ ...base, PORT: '70000' }, 'PORT'],
  [{ ...base, WORKERS: '0' }, 'WORKERS'],
  [{ ...base, WORKERS: '2' }, 'WORKERS'], // more than one worker needs Redis
  [{ ...base, DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
  [{ ...base, REDIS_URL: 'http://x' }, 'REDIS_URL'],
  [{ ...base, JWT_SECRET: 'short' }, 'JWT_SECRET'],
  [{ DATABASE_URL: base.DATABASE_URL }, 'JWT_SECRET'],
  [{ ...base, JWT_PUBLIC_KEY: 'not a pem' }, 'JWT_PUBLIC_KEY'],
  [{ ...base, LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
  [{ ...base, HEAP_LIMIT_MB: '64' }, 'HEAP_LIMIT_MB'], // below what a heavy page needs
  [{ ...base, HEAP_LIMIT_MB: '1.5' }, 'HEAP_LIMIT_MB'],
  [{ ...base, TRUST_PROXY: '10.0.0.1,not-an-ip' }, 'TRUST_PROXY'],
  [{ ...base, TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
];
for (const [env, variable] of bad) {
  t.test(`bad ${variable}: ${JSON.stringify(env[variable] ?? '(missing)')}`, async (t) => {
    const error = t.throws(() => loadConfig(env)) as unknown;
    t.ok(error instanceof ConfigError);
    t.equal((error as ConfigError).variable, variable);
    t.match((error as ConfigError).message, new RegExp(`^Invalid configuration: ${variable} `));
  });
}

t.test('workers get a heap limit unless the operator set one', async (t) => {
  t.equal(loadConfig(base).heapLimitMb, 512);
  t.equal(loadConfig({ ...base, HEAP_LIMIT_MB: '1024' }).heapLimitMb, 1024);
  t.same(heapFlags(512, ''), ['--max-old-space-size=512', '--max-semi-space-size=8', '--no-allocation-site-pretenuring']);
  t.same(heapFlags(512, '--max-old-space-size=2048'), ['--max-semi-space-size=8', '--no-allocation-site-pretenuring'], 'NODE_OPTIONS wins');
  t.same(heapFlags(512, '--enable-source-maps --max-semi-space-size=32 --max-old-space-size=300 --allocation-site-pretenuring'), []);
  t.same(heapFlags(512, '--no-allocation-site-pretenuring'), ['--max-old-space-size=512', '--max-semi-space-size=8'], 'not twice');
  t.same(mallocEnv({}), { MALLOC_MMAP_THRESHOLD_: '131072' }, 'large buffers go back to the system when freed');
  t.same(mallocEnv({ MALLOC_MMAP_THRESHOLD_: '1048576' }), {}, "the operator's glibc setting wins");
});

t.test('TRUST_PROXY takes a list of addresses and CIDRs', async (t) => {
  t.same(loadConfig({ ...base, TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1' }).trustProxy, ['127.0.0.1', '10.0.0.0/8', '::1']);
});

t.test('the server refuses bad configuration with one line and exit code 1', async (t) => {
  const result = spawnSync(process.execPath, nodeArgs('src/main.ts'), {
    env: { PATH: process.env.PATH, ...base, PORT: 'nope' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(result.status, 1);
  t.equal(result.stderr.trim(), 'Invalid configuration: PORT must be a whole number from 0 to 65535');
  t.equal(result.stdout, '');
});

t.test('usage per token is counted unless the bench turns it off (COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE=1)', async (t) => {
  t.equal(loadConfig(base).countTokenUsage, true);
  t.equal(loadConfig({ ...base, COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE: '0' }).countTokenUsage, true);
  t.equal(loadConfig({ ...base, COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE: '1' }).countTokenUsage, false);
});
