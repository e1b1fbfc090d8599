// `npm run mint-jwt -- <user_id> [--ttl SECONDS]`: a dev/demo employee JWT signed with JWT_SECRET.
// Production JWTs come from the platform's sign-in; this is for the demo, scripts and tests.
import { parseArgs } from 'node:util';
import { mintEmployeeJwt } from '../auth/jwt.js';
import { dataDirOf, embeddedJwtSecret } from '../db/embedded-handoff.js';

const { positionals, values } = parseArgs({ allowPositionals: true, options: { ttl: { type: 'string', default: '43200' } } });
const userId = Number(positionals[0]);
const ttlSeconds = Number(values.ttl);
// the running (or last) embedded demo's secret when JWT_SECRET is unset: its JWTs then work there
const secret = process.env.JWT_SECRET || (process.env.DATABASE_URL ? '' : (embeddedJwtSecret(dataDirOf()) ?? ''));
if (!Number.isInteger(userId) || userId < 1) {
  console.error('usage: npm run mint-jwt -- <user_id> [--ttl SECONDS]');
  process.exit(2);
}
if (secret.length < 32) {
  console.error("Invalid configuration: JWT_SECRET must be set (at least 32 characters), or run npm start once for the embedded demo's");
  process.exit(1);
}
if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
  console.error('--ttl must be a whole number of seconds');
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
