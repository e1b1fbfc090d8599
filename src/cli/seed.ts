// `npm run seed -- --demo [--json]`: migrate DATABASE_URL, load the demo data set (idempotent) and
// print what a partner engineer needs to try the API. With --json, stdout is one JSON object.
import pg from 'pg';
import { ConfigError, loadConfig } from '../config.js';
import { migrate } from '../db/migrate.js';
import { seedDemo, type DemoSummary } from '../seed/demo.js';
import { commandDatabase, dataDirOf, embeddedJwtSecret } from '../db/embedded-handoff.js';

const usage =
  'usage: npm run seed -- --demo [--json]\n' +
  '  --demo  load the demo companies, units, farmers, movements and sensor readings\n' +
  '  --json  print one JSON object (ids, JWTs and the user ids they name) on stdout, diagnostics on stderr';

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== '--demo' && arg !== '--json');
if (!args.includes('--demo') || unknown.length > 0) {
  if (unknown.length > 0) console.error(`unknown argument: ${unknown.join(' ')}`);
  console.error(usage);
  process.exit(2);
}
const json = args.includes('--json');

function configuration() {
  try {
    // presence first: the seed signs with a secret (never a public key); without DATABASE_URL it
    // seeds the running npm start's embedded database, with that demo's secret
    if (!process.env.DATABASE_URL?.trim()) {
      const database = commandDatabase('npm run seed', () => {});
      if ('problem' in database)
        throw new ConfigError(
          'DATABASE_URL',
          'is required for npm run seed (a postgres:// URL), or start the embedded demo with npm start first',
        );
      process.env.DATABASE_URL = database.url;
      process.env.JWT_SECRET ||= embeddedJwtSecret(dataDirOf()) ?? '';
    }
    if (!process.env.JWT_SECRET?.trim()) {
      throw new ConfigError('JWT_SECRET', 'is required for npm run seed: the demo JWTs are signed with it (HS256, at least 32 characters)');
    }
    const config = loadConfig();
    if (!config.databaseUrl || config.jwt?.kind !== 'secret') throw new Error('unreachable');
    return { ...config, databaseUrl: config.databaseUrl, jwtSecret: config.jwt.secret };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

async function seed(): Promise<DemoSummary> {
  const config = configuration();
  const started = Date.now();
  await migrate(config.databaseSessionUrl ?? config.databaseUrl, config, log);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
  try {
    const summary = await seedDemo(pool, {
      jwtSecret: config.jwtSecret,
      jwtIssuer: config.jwtIssuer,
      jwtAudience: config.jwtAudience,
      log,
    });
    log(`demo data ready in ${Date.now() - started} ms`);
    return summary;
  } finally {
    await pool.end();
  }
}

const log = (line: string) => console.error(line);
const summary = await seed().catch((error: unknown) => {
  console.error(`seed failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

if (json) {
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} else {
  for (const company of summary.companies) {
    console.log(`${company.name} (company ${company.id})`);
    console.log(`  locations: ${company.location_ids.join(', ')}`);
    console.log(
      `  cooling units: ${company.cooling_unit_ids.join(', ')}` +
        ` (soft-deleted: ${company.deleted_cooling_unit_ids.join(', ') || 'none'})`,
    );
    console.log(`  employee JWT (12 h, user ${company.employee_user_id}): ${company.employee_jwt}`);
    console.log(`  operator JWT, not an employee (12 h, user ${company.non_employee_user_id}): ${company.non_employee_jwt}`);
  }
}
