// Every variable of src/config.ts: each bad value stops loadConfig with one ConfigError line,
// `Invalid configuration: NAME ...`, naming that variable (and never a stack trace or a crypto
// error from deeper down); the good values next to them still load.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CONFIG_VARIABLES, ConfigError, loadConfig, loadMigrationConfig, loadSensorStorageConfig } from '../../src/config.js';

const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', JWT_SECRET: 'x'.repeat(32) };
const withRedis = { ...base, REDIS_URL: 'redis://127.0.0.1:6379' };

const scratch = mkdtempSync(join(tmpdir(), 'coldtrack-config-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
const aFile = join(scratch, 'a-file');
writeFileSync(aFile, 'not a directory');

const spki = (pair: { publicKey: { export(options: { type: 'spki'; format: 'pem' }): string | Buffer } }) =>
  pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const ed25519 = generateKeyPairSync('ed25519');
const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
const rsa2048 = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
const privatePem = p256.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const rsaPrivatePem = rsa2048.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const noSecret = { DATABASE_URL: base.DATABASE_URL };
/** LEAK_REPORT_PUBLIC_KEYS as GitHub's key endpoint serves it (is_current: an extra field, ignored) */
const leakKeys = (...entries: Array<Record<string, unknown>>) => JSON.stringify(entries);
const githubKey = (key: string, key_identifier = 'f'.repeat(64)) => ({ key_identifier, key, is_current: true });

/** [variable, bad value, what the message must say, the rest of the environment] */
const bad: Array<[string, string, RegExp, Record<string, string>?]> = [
  ['DATABASE_URL', 'mysql://x', /must be a postgres:\/\/ or postgresql:\/\/ URL/],
  ['DATABASE_URL', 'postgres://u@127.0.0.1:99999/db', /is not a valid URL/],
  ['DATABASE_URL', 'postgres://u@[::1/db', /is not a valid URL/],
  ['DATABASE_URL', 'postgres://u:pw%C3%28@127.0.0.1/db', /malformed percent-escape/], // not UTF-8: node-postgres throws URIError
  ['DATABASE_URL', 'postgres://u@127.0.0.1/db?sslrootcert=/nonexistent/ca.pem', /sslrootcert=\/nonexistent\/ca\.pem, which is not a file/],
  ['REDIS_URL', 'http://x', /must be a redis:\/\/ or rediss:\/\/ URL/],
  ['REDIS_URL', 'redis://127.0.0.1:70000', /is not a valid URL/],
  ['REDIS_URL', 'redis://:p%zz@127.0.0.1:6379', /malformed percent-escape/],
  ['REDIS_URL', 'redis://127.0.0.1:6379/cache', /database number/],
  ['REDIS_KEY_PREFIX', 'has space', /must be 1\.\.64 letters/],
  ['REDIS_KEY_PREFIX', 'x'.repeat(65), /must be 1\.\.64 letters/],
  ['DATA_DIR', aFile, /exists and is not a directory/, {}],
  ['DATA_DIR', join(aFile, 'below-a-file'), /cannot be reached/, {}],
  ['HOST', 'not a host', /must be an IP address or a host name/],
  ['HOST', '[::1]', /must be an IP address or a host name/],
  ['HOST', '0.0.0.0:3000', /must be an IP address or a host name/],
  ['PORT', 'abc', /must be a whole number from 0 to 65535/],
  ['PORT', '70000', /must be at most 65535/],
  ['PORT', '-1', /must be a whole number/],
  ['WORKERS', '0', /must be at least 1/],
  ['WORKERS', '65', /must be at most 64/, withRedis],
  ['WORKERS', '2', /REDIS_URL is not set/],
  ['REDIS_CLUSTER_NODES', '127.0.0.1', /must be a comma-separated list of host:port/],
  ['REDIS_CLUSTER_NODES', '127.0.0.1:7000,bad host:7001', /not "bad host:7001"/],
  ['REDIS_CLUSTER_NODES', '127.0.0.1:70000', /host:port/],
  ['DATABASE_READ_URL', 'mysql://x', /must be a postgres:\/\/ or postgresql:\/\/ URL/],
  ['DATABASE_READ_URL', 'postgres://u@127.0.0.1:99999/db', /is not a valid URL/],
  ['DATABASE_SESSION_URL', 'mysql://x', /must be a postgres:\/\/ or postgresql:\/\/ URL/],
  ['DATABASE_SESSION_URL', 'postgres://u@[::1/db', /is not a valid URL/],
  ['DATABASE_SESSION_URL', 'postgres://u@127.0.0.1:5432/db', /needs DATABASE_URL/, { JWT_SECRET: base.JWT_SECRET }],
  ['DATABASE_SESSION_URL', '', /is required with DB_POOLER=transaction: .*need a session/, { ...base, DB_POOLER: 'transaction' }],
  ['JWT_SECRET', 'short', /at least 32 characters/],
  ['JWT_SECRET', '', /is required \(or JWT_PUBLIC_KEY\) when DATABASE_URL is set/, noSecret],
  ['JWT_PUBLIC_KEY', 'not a pem', /must be a PEM "PUBLIC KEY"/, noSecret],
  ['JWT_PUBLIC_KEY', '-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----', /is not a readable PEM public key/, noSecret],
  ['JWT_PUBLIC_KEY', spki(p384), /EC key on curve secp384r1: expected RSA of 2048 bits or more \(RS256\) or EC P-256 \(ES256\)/, noSecret],
  ['JWT_PUBLIC_KEY', spki(ed25519), /is an ed25519 key: expected RSA/, noSecret],
  ['JWT_PUBLIC_KEY', spki(rsa1024), /is a 1024-bit RSA key: expected RSA of 2048 bits or more/, noSecret],
  ['JWT_PUBLIC_KEY', spki(rsaPss), /is an rsa-pss key/, noSecret],
  ['JWT_PUBLIC_KEY', privatePem, /holds a private key: a public key is expected/, noSecret],
  ['JWT_PUBLIC_KEY', rsaPrivatePem, /holds a private key: a public key is expected/, noSecret],
  ['JWT_PUBLIC_KEY', spki(p256) + spki(rsa2048), /must hold one PEM "PUBLIC KEY", not 2/, noSecret],
  ['JWT_PUBLIC_KEY', spki(p256), /cannot be combined with JWT_SECRET/],
  ['JWT_ISSUER', 'https://auth.example\u0000', /must be the "iss" value/],
  ['JWT_ISSUER', '://no-scheme', /must be the "iss" value/],
  ['JWT_AUDIENCE', 'a'.repeat(1025), /must be the "aud" value/],
  ['JWT_AUDIENCE', 'line\nbreak', /must be the "aud" value/],
  ['TRUST_PROXY', '10.0.0.1,not-an-ip', /must be a comma-separated list of IPs or CIDRs/],
  ['TRUST_PROXY', '10.0.0.0/33', /must be a comma-separated list/],
  ['TRUST_PROXY', '10.0.0.0/0', /prefix length 1 or more/],
  ['TRUST_PROXY', '::/0', /prefix length 1 or more/],
  ['TRUST_PROXY', 'loopback', /must be a comma-separated list/],
  ['TRUST_PROXY', ',', /must be a comma-separated list/],
  ['PUBLIC_BASE_URL', 'api.coldtrack.example', /must be an http:\/\/ or https:\/\/ URL .* or a path starting with \//],
  ['PUBLIC_BASE_URL', 'ftp://api.coldtrack.example', /must be an http:\/\/ or https:\/\/ URL/],
  ['PUBLIC_BASE_URL', 'https://user:pw@api.coldtrack.example', /without credentials, query or fragment/],
  ['PUBLIC_BASE_URL', 'https://api.coldtrack.example/?v=1', /without credentials, query or fragment/],
  ['PUBLIC_BASE_URL', '/coldtrack#docs', /without credentials, query or fragment/],
  ['PUBLIC_BASE_URL', '//api.coldtrack.example', /must be an http:\/\/ or https:\/\/ URL/],
  ['PUBLIC_BASE_URL', 'https://', /must be an http:\/\/ or https:\/\/ URL/],
  ['LOG_LEVEL', 'loud', /must be one of fatal, error, warn, info, debug, trace, silent/],
  ['LOG_LEVEL', 'INFO', /must be one of/],
  ['DB_POOL_MAX', '0', /must be at least 1/],
  ['DB_POOL_MAX', '201', /must be at most 200/],
  ['DB_POOL_MAX', 'ten', /must be a whole number from 1 to 200/],
  ['DB_QUERY_TIMEOUT_MS', '999', /must be at least 1000/],
  ['DB_QUERY_TIMEOUT_MS', '5s', /must be a whole number from 1000 to 600000/],
  ['DB_STARTUP_WAIT_SECONDS', '-1', /must be a whole number from 0 to 3600/],
  ['DB_STARTUP_WAIT_SECONDS', '3601', /must be at most 3600/],
  ['DB_PREPARED_STATEMENTS', 'yes', /must be on or off/],
  ['DB_PREPARED_STATEMENTS', 'OFF', /must be on or off/],
  ['DB_POOLER', 'pgbouncer', /^Invalid configuration: DB_POOLER must be none or transaction, not "pgbouncer"$/],
  ['DB_POOLER', 'session', /must be none or transaction/],
  ['DB_POOLER', 'transaction', /is transaction but DATABASE_URL is not set/, { JWT_SECRET: base.JWT_SECRET }],
  ['LAST_USED_FLUSH_SECONDS', '0', /must be at least 1/],
  ['LAST_USED_FLUSH_SECONDS', '0.5', /must be a whole number from 1 to 3600/],
  ['ROLLUP_THREADS', '0', /must be at least 1/],
  ['ROLLUP_THREADS', '2.5', /must be a whole number from 1 to 64/],
  ['HEAP_LIMIT_MB', '64', /must be at least 128/],
  ['HEAP_LIMIT_MB', '1.5', /must be a whole number/],
  ['HEAP_LIMIT_MB', '1e9', /must be a whole number/],
  ['THREAD_POOL_NICE', '20', /must be at most 19/],
  ['THREAD_POOL_NICE', '-5', /must be a whole number from 0 to 19/],
  ['THREAD_POOL_NICE', 'low', /must be a whole number from 0 to 19/],
  ['SENSOR_STORAGE', 'bogus', /^Invalid configuration: SENSOR_STORAGE must be timescale or postgres, not "bogus"$/],
  ['SENSOR_STORAGE', 'TimescaleDB', /must be timescale or postgres, not "TimescaleDB"/],
  ['SENSOR_RETENTION_DAYS', '29', /must be a whole number of days, at least 30/],
  ['SENSOR_RETENTION_DAYS', '90d', /must be a whole number of days, at least 30/],
  ['SENSOR_RETENTION_DAYS', '36501', /must be at most 36500/],
  ['LEAK_REPORT_PUBLIC_KEYS', 'not json', /is not valid JSON: expected a JSON array of \{"key_identifier", "key"\} objects/],
  ['LEAK_REPORT_PUBLIC_KEYS', spki(p256), /is not valid JSON/], // a bare PEM, not the JSON list
  ['LEAK_REPORT_PUBLIC_KEYS', '{"key_identifier": "x"}', /must be a JSON array of/],
  ['LEAK_REPORT_PUBLIC_KEYS', '[]', /holds no key: leave it unset to turn leak reports off/],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys({ key: spki(p256) }), /entry 0: key_identifier must be 1\.\.128 printable characters/],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys(githubKey(spki(p256), 'has space')), /entry 0: key_identifier must be/],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys(githubKey(spki(p256)), githubKey(spki(p256))), /entry 1: key_identifier is given twice/],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys(githubKey(spki(p256)), { key_identifier: 'k2' }), /entry 1: key must be a PEM public key/],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys(githubKey('not a pem')), /entry 0: key must be one PEM "PUBLIC KEY"/],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys(githubKey(spki(p256) + spki(p256))), /entry 0: key must be one PEM "PUBLIC KEY"/],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys(githubKey(privatePem)), /entry 0: key holds a private key/],
  [
    'LEAK_REPORT_PUBLIC_KEYS',
    leakKeys(githubKey('-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----')),
    /entry 0: key is not a readable PEM public key/,
  ],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys(githubKey(spki(p384))), /entry 0: key is an EC key on curve secp384r1: expected EC P-256/],
  ['LEAK_REPORT_PUBLIC_KEYS', leakKeys(githubKey(spki(rsa2048))), /entry 0: key is an rsa key: expected EC P-256/],
  ['SENSOR_CHANGES_RETENTION_DAYS', '0', /must be at least 1/],
  ['SENSOR_CHANGES_RETENTION_DAYS', '7d', /must be a whole number/],
  ['SENSOR_CHANGES_RETENTION_DAYS', '3661', /must be at most 3660/],
  ['WEBHOOK_DELIVERY', 'yes', /must be on or off/],
  ['WEBHOOK_ALLOWED_NETWORKS', '127.0.0.0/8,localhost', /is not a list of IP networks: "localhost"/],
  ['WEBHOOK_ALLOWED_NETWORKS', '10.0.0.0/33', /is not a list of IP networks: "10.0.0.0\/33"/],
  ['WEBHOOK_TIMEOUT_SECONDS', '0', /must be at least 1/],
  ['WEBHOOK_TIMEOUT_SECONDS', '61', /must be at most 60/],
  ['WEBHOOK_CONCURRENCY', '0', /must be at least 1/],
  ['WEBHOOK_CONCURRENCY', 'many', /must be a whole number/],
  ['COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE', 'yes', /must be 1 \(usage per token not counted\) or 0/],
  ['OTEL_SDK_DISABLED', 'yes', /must be true or false/],
  ['OTEL_TRACES_EXPORTER', 'jaeger', /must be otlp or none/],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'otel-collector:4318', /must be an http:\/\/ or https:\/\/ URL/],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://otel-collector:4317', /must be an http:\/\/ or https:\/\/ URL/],
  ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'https://user:pw@otel.example/v1/traces', /without credentials/],
  ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', /must be http\/protobuf or http\/json \(grpc is not built in/],
  ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'json', /must be http\/protobuf or http\/json/],
  ['OTEL_EXPORTER_OTLP_HEADERS', 'api-key', /must be a comma-separated list of key=value headers/],
  ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'x-key=%zz', /must be a comma-separated list of key=value headers/],
  ['OTEL_TRACES_SAMPLER', 'ratio', /must be one of always_on, always_off, traceidratio, parentbased_always_on/],
  ['OTEL_TRACES_SAMPLER_ARG', '1.5', /must be a sampling ratio from 0 to 1/],
  ['OTEL_TRACES_SAMPLER_ARG', '1%', /must be a sampling ratio from 0 to 1/],
  [
    'OTEL_TRACES_SAMPLER_ARG',
    '0.5',
    /OTEL_TRACES_SAMPLER is parentbased_always_on: a ratio needs/,
    { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' },
  ],
  ['OTEL_SERVICE_NAME', 'line\nbreak', /must be 1\.\.255 printable characters/],
  ['OTEL_RESOURCE_ATTRIBUTES', 'deployment.environment', /must be a comma-separated list of key=value attributes/],
];

t.test('every variable of the schema has bad values here', async (t) => {
  const covered = new Set(bad.map(([variable]) => variable));
  for (const variable of CONFIG_VARIABLES) t.ok(covered.has(variable), `${variable} has a bad-value case`);
  // and the operators' configuration table names exactly these (`JWT_ISSUER`, `JWT_AUDIENCE` share a row)
  const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const table = operations.slice(
    operations.indexOf('## Configuration'),
    operations.indexOf('\n## ', operations.indexOf('## Configuration') + 5),
  );
  const documented = new Set(
    [...table.matchAll(/^\| ((?:`[A-Z_]+`(?:, )?)+) \|/gm)].flatMap((row) => [...row[1]!.matchAll(/`([A-Z_]+)`/g)].map((name) => name[1]!)),
  );
  t.same([...documented].sort(), [...CONFIG_VARIABLES].sort(), 'docs/operations.md documents every variable, and only those');
});

for (const [variable, value, message, env = base] of bad) {
  const shown = value.length > 60 ? `${value.slice(0, 40).replace(/\n/g, '\\n')}... (${value.length} chars)` : JSON.stringify(value);
  t.test(`bad ${variable}: ${shown}`, async (t) => {
    let error: unknown;
    try {
      loadConfig({ ...env, [variable]: value });
    } catch (caught) {
      error = caught;
    }
    t.ok(error instanceof ConfigError, 'a ConfigError');
    const { variable: named, message: text } = error as ConfigError;
    t.equal(named, variable, 'names the variable');
    t.match(text, new RegExp(`^Invalid configuration: ${variable} `));
    t.match(text, message);
    t.notMatch(text, /\n/, 'one line');
    if (variable === 'JWT_PUBLIC_KEY' || variable === 'LEAK_REPORT_PUBLIC_KEYS') {
      // no key material in the message: not a line of the base64 body
      for (const line of value.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'))) {
        t.notOk(text.includes(line.slice(0, 20)), 'no key material echoed');
      }
    }
  });
}

t.test('the good values next to them load', async (t) => {
  const good: Array<Record<string, string>> = [
    { ...base, DATABASE_URL: 'postgres://u:p%w rd@127.0.0.1:5432/db' }, // node-postgres escapes a bare % and a space
    { ...base, DATABASE_URL: 'postgresql://u:p%40ss@[::1]:5432/db?sslmode=require' },
    { ...base, DATABASE_URL: 'postgres:///coldtrack?host=/var/run/postgresql' },
    { ...base, DATABASE_URL: `postgres://u@127.0.0.1/db?sslrootcert=${aFile}` },
    { ...withRedis, REDIS_URL: 'rediss://:secret%21@cache.internal:6380/2' },
    { ...withRedis, REDIS_URL: 'redis://127.0.0.1' },
    { ...base, HOST: '::' },
    { ...base, HOST: 'localhost' },
    { ...base, HOST: 'api.internal.example' },
    { ...base, HOST: 'coldtrack_app' },
    { ...base, DATA_DIR: aFile }, // not the embedded mode: DATA_DIR is not used
    { DATA_DIR: join(scratch, 'not-yet-there') },
    { ...base, JWT_ISSUER: 'https://auth.coldtrack.test', JWT_AUDIENCE: 'coldtrack-partner-api' },
    { ...base, JWT_ISSUER: 'urn:coldtrack:auth' },
    { ...base, TRUST_PROXY: '10.0.0.0/8, ::1, fd00::/8, 192.168.1.1/32' },
    { ...base, LOG_LEVEL: 'silent' },
    { ...base, DB_PREPARED_STATEMENTS: 'off' },
    { ...base, DB_POOLER: 'none' },
    { ...base, DB_POOLER: 'transaction', DATABASE_SESSION_URL: 'postgres://u@10.0.0.20:5432/db' },
    { ...base, DATABASE_SESSION_URL: 'postgres://u@10.0.0.20:5432/db' },
    { ...base, DB_POOL_MAX: '200', ROLLUP_THREADS: '64', HEAP_LIMIT_MB: '65536' },
    { ...base, THREAD_POOL_NICE: '19' },
    { ...base, PORT: ' 8080 ', WORKERS: '1' },
    { ...base, SENSOR_STORAGE: 'postgres', SENSOR_RETENTION_DAYS: '30' },
    { ...base, SENSOR_STORAGE: ' timescale ', SENSOR_RETENTION_DAYS: '36500' },
    { ...base, LEAK_REPORT_PUBLIC_KEYS: leakKeys(githubKey(spki(p256)), { ...githubKey(spki(p256), 'e'.repeat(64)), is_current: false }) },
    // the key endpoint's whole answer, as `curl https://api.github.com/meta/public_keys/secret_scanning` prints it
    { ...base, LEAK_REPORT_PUBLIC_KEYS: JSON.stringify({ public_keys: [githubKey(spki(p256))] }) },
  ];
  for (const env of good) t.doesNotThrow(() => loadConfig(env), JSON.stringify(env));
});

t.test('tracing: off unless an OTLP endpoint is set, and read as the OpenTelemetry specification says', async (t) => {
  t.equal(loadConfig(base).tracing, null, 'unset: off');
  t.equal(loadConfig({ ...base, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SERVICE_NAME: 'x' }).tracing, null, 'a sampler alone: still off');
  const endpoint = { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318/' };
  t.same(loadConfig(endpoint).tracing, {
    url: 'http://otel-collector:4318/v1/traces',
    protocol: 'http/protobuf',
    headers: {},
    sampler: 'parentbased_always_on',
    ratio: 1,
    serviceName: 'coldtrack-api',
    resourceAttributes: {},
  });
  t.equal(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing, null, 'OTEL_SDK_DISABLED=true: off');
  t.equal(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing, null, 'OTEL_TRACES_EXPORTER=none: off');
  t.equal(
    loadConfig({ ...base, OTEL_TRACES_EXPORTER: 'otlp' }).tracing?.url,
    'http://localhost:4318/v1/traces',
    'otlp asked: the default endpoint',
  );
  const tuned = loadConfig({
    ...endpoint,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo.example/otlp/v1/traces',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-scope-orgid=ops,authorization=Basic%20abc',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-scope-orgid=sre',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.01',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=from-attributes',
  }).tracing;
  t.same(tuned, {
    url: 'https://tempo.example/otlp/v1/traces',
    protocol: 'http/json',
    headers: { 'x-scope-orgid': 'sre', authorization: 'Basic abc' },
    sampler: 'parentbased_traceidratio',
    ratio: 0.01,
    serviceName: 'from-attributes',
    resourceAttributes: { 'deployment.environment': 'prod', 'service.name': 'from-attributes' },
  });
  t.equal(loadConfig({ ...endpoint, OTEL_SERVICE_NAME: 'api-eu' }).tracing?.serviceName, 'api-eu');
  let error: unknown;
  try {
    loadConfig({ ...base, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20s3cr3t-value,broken' });
  } catch (caught) {
    error = caught;
  }
  t.notMatch((error as Error).message, /s3cr3t/, 'a bad header list is refused without echoing it');
});

t.test('the sensor settings: loadConfig and npm run migrate (loadSensorStorageConfig) read them alike', async (t) => {
  t.same(loadSensorStorageConfig({}), { sensorStorage: null, sensorRetentionDays: null }, 'unset: chosen by the server, no retention');
  const env = { SENSOR_STORAGE: 'timescale', SENSOR_RETENTION_DAYS: ' 90 ' };
  t.same(loadSensorStorageConfig(env), { sensorStorage: 'timescale', sensorRetentionDays: 90 });
  const config = loadConfig({ ...base, ...env });
  t.same([config.sensorStorage, config.sensorRetentionDays], ['timescale', 90], 'the same values in the service config');
  // the migrate command checks only these: no JWT secret or Redis needed, and a bad value elsewhere is not its business
  t.doesNotThrow(() => loadSensorStorageConfig({ ...env, DATABASE_URL: base.DATABASE_URL, PORT: 'abc' }), 'other variables are not read');
  t.throws(
    () => loadSensorStorageConfig({ SENSOR_RETENTION_DAYS: '7' }),
    new ConfigError('SENSOR_RETENTION_DAYS', 'must be a whole number of days, at least 30'),
    'the same one-line error as start-up',
  );
});

t.test('PUBLIC_BASE_URL: the OpenAPI servers entry, without a trailing slash but for "/" itself', async (t) => {
  for (const [value, expected] of [
    [undefined, '/'],
    ['/', '/'],
    ['/coldtrack/', '/coldtrack'],
    ['https://api.coldtrack.example/', 'https://api.coldtrack.example'],
    ['https://API.coldtrack.example:8443/partner/v1//', 'https://api.coldtrack.example:8443/partner/v1'],
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
  ] as const) {
    t.equal(
      loadConfig({ ...base, ...(value === undefined ? {} : { PUBLIC_BASE_URL: value }) }).publicBaseUrl,
      expected,
      `${value ?? '(unset)'}: ${expected}`,
    );
  }
});

t.test('DB_POOLER=transaction turns prepared statements off unless DB_PREPARED_STATEMENTS says otherwise', async (t) => {
  const pooled = { ...base, DB_POOLER: 'transaction', DATABASE_SESSION_URL: 'postgres://u@10.0.0.20:5432/db' };
  t.same(
    [loadConfig(base).dbPooler, loadConfig(base).dbPreparedStatements, loadConfig(base).databaseSessionUrl],
    ['none', true, null],
    'the defaults',
  );
  const config = loadConfig(pooled);
  t.same(
    [config.dbPooler, config.dbPreparedStatements, config.databaseSessionUrl],
    ['transaction', false, 'postgres://u@10.0.0.20:5432/db'],
  );
  t.equal(
    loadConfig({ ...pooled, DB_PREPARED_STATEMENTS: 'on' }).dbPreparedStatements,
    true,
    'a pooler that keeps them (PgBouncer 1.21+ with max_prepared_statements)',
  );
});

t.test('npm run migrate reads the session URL and the lock wait, and nothing it does not need', async (t) => {
  t.same(loadMigrationConfig({}), { sensorStorage: null, sensorRetentionDays: null, databaseSessionUrl: null, lockWaitMs: 60_000 });
  t.same(loadMigrationConfig({ DATABASE_SESSION_URL: 'postgres://u@10.0.0.20/db', DB_STARTUP_WAIT_SECONDS: '5', PORT: 'abc' }), {
    sensorStorage: null,
    sensorRetentionDays: null,
    databaseSessionUrl: 'postgres://u@10.0.0.20/db',
    lockWaitMs: 5000,
  });
  t.throws(
    () => loadMigrationConfig({ DATABASE_SESSION_URL: 'mysql://x' }),
    /^Invalid configuration: DATABASE_SESSION_URL must be a postgres/,
  );
});

t.test('JWT_PUBLIC_KEY: RSA 2048+ and P-256 SPKI keys load, with \\n escapes too', async (t) => {
  for (const [label, pem] of [
    ['RSA 2048', spki(rsa2048)],
    ['P-256', spki(p256)],
    ['P-256 on one line with \\n escapes', spki(p256).replace(/\n/g, '\\n')],
    ['RSA 4096', spki(generateKeyPairSync('rsa', { modulusLength: 4096 }))],
  ] as const) {
    const config = loadConfig({ ...noSecret, JWT_PUBLIC_KEY: pem });
    t.equal(config.jwt?.kind, 'public-key', label);
    t.match(
      config.jwt?.kind === 'public-key' ? config.jwt.pem : '',
      /^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----$/,
      `${label}: the PEM block`,
    );
  }
});
