// `npm run mint-jwt -- <user_id> [--ttl SECONDS]`: a dev/demo employee JWT signed with JWT_SECRET,
// for a Registered Employee only (src/auth/registered-employee.ts), looked up in DATABASE_URL (or
// the running npm start's embedded database): a JWT the API would refuse is never printed.
// Production JWTs come from the platform's sign-in; this is for the demo, scripts and tests.
// Exit status: 0 the JWT on stdout; 1 no database or secret, or the database could not be read;
// 2 bad arguments, a user who does not exist or is not an active Registered Employee included.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { mintEmployeeJwt } from '../auth/jwt.js';
import { employeeSql, employeeStanding, type UserForAuth } from '../auth/registered-employee.js';
import { commandDatabase, dataDirOf, embeddedJwtSecret } from '../db/embedded-handoff.js';
import { MAX_INT4 } from '../db/int4.js';
import { CONNECT_TIMEOUT_MS } from '../db/pool.js';

const USAGE =
  'usage: npm run mint-jwt -- <user_id> [--ttl SECONDS]\n' +
  '  signs a JWT for an active Registered Employee of DATABASE_URL (or of the running npm start), and for no one else';

function usageError(message: string): never {
  console.error(message);
  console.error(USAGE);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({ allowPositionals: true, options: { ttl: { type: 'string', default: '43200' } } });
} catch (error) {
  usageError((error as Error).message.split('\n')[0]!);
}
const { positionals, values } = parsed;
if (positionals.length !== 1 || !/^[1-9]\d{0,9}$/.test(positionals[0]!) || Number(positionals[0]) > MAX_INT4) {
  usageError(
    positionals.length === 1 ? `<user_id> must be a user id (a whole number above 0), not "${positionals[0]}"` : 'give one user id',
  );
}
const userId = Number(positionals[0]);
const ttlSeconds = Number(values.ttl);
if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) usageError('--ttl must be a whole number of seconds');
// the running (or last) embedded demo's secret when JWT_SECRET is unset: its JWTs then work there
const secret = process.env.JWT_SECRET || (process.env.DATABASE_URL ? '' : (embeddedJwtSecret(dataDirOf()) ?? ''));
if (secret.length < 32) {
  console.error("Invalid configuration: JWT_SECRET must be set (at least 32 characters), or run npm start once for the embedded demo's");
  process.exit(1);
}
const database = commandDatabase('npm run mint-jwt');
if ('problem' in database) {
  console.error(database.problem);
  process.exit(1);
}
const databaseUrl = database.url;

/** Why the user may not have a JWT, or null when they may. */
async function refusal(): Promise<string | null> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    const { rows } = await client.query<UserForAuth>(employeeSql.userForAuth, [userId]);
    const standing = employeeStanding(rows[0]);
    const because = 'the API refuses its JWT, so none is minted (only an active Registered Employee may manage tokens)';
    switch (standing.kind) {
      case 'registered_employee':
        return null;
      case 'unknown':
        return `user ${userId} does not exist in this database: ${because}`;
      case 'inactive':
        return `user ${userId} is inactive: ${because}`;
      case 'not_an_employee':
        return `user ${userId} is not a Registered Employee (role ${standing.role}${standing.role === 'REGISTERED_EMPLOYEE' ? ', no company' : ''}): ${because}`;
    }
  } catch (error) {
    console.error(`mint-jwt: could not read user ${userId}: ${(error as Error).message}`);
    // 42P01: no users table: the database was never migrated
    if ((error as { code?: string }).code === '42P01') console.error('the database is not migrated yet: run npm run migrate first');
    process.exit(1);
  } finally {
    await client.end().catch(() => {});
  }
}

const refused = await refusal();
if (refused) {
  console.error(refused);
  process.exit(2);
}
console.log(
  await mintEmployeeJwt({
    secret,
    userId,
    ttlSeconds,
    issuer: process.env.JWT_ISSUER || null,
    audience: process.env.JWT_AUDIENCE || null,
  }),
);
