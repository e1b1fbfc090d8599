// `npm run mint-jwt -- <user_id>` as a developer runs it: a Registered Employee gets a JWT the API
// accepts (GET /api/v1/me names them); a user who does not exist, an inactive employee, an operator
// and a farmer get none: exit 2, one line on stderr saying why, nothing on stdout. Bad arguments
// are exit 2 with the usage, no database exit 1.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { createTestApp, TEST_JWT_SECRET } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { nodeArgs } from '../helpers/entry.js';

const execFileAsync = promisify(execFile);
const world = await createTestApp(t);
const company = await createCompany(world.db.pool, 'Mint Co');

async function mint(args: string[], env: Record<string, string> = { DATABASE_URL: world.db.url }) {
  const cleanEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: '/nonexistent-coldtrack-data-dir', JWT_SECRET: TEST_JWT_SECRET };
  delete cleanEnv.DATABASE_URL;
  Object.assign(cleanEnv, env);
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [...nodeArgs('src/cli/mint-jwt.ts'), ...args], {
      env: cleanEnv,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

t.test('a Registered Employee: exit 0 and a JWT the API accepts as theirs', async (t) => {
  const run = await mint([String(company.employeeId), '--ttl', '600']);
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stderr, '', 'nothing on stderr');
  const jwt = run.stdout.trim();
  t.match(jwt, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'one JWT on stdout');
  const me = await world.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${jwt}` } });
  t.equal(me.statusCode, 200, me.body);
  t.match(me.json(), { user_id: company.employeeId, company_id: company.companyId });
});

t.test('anyone else: exit 2, why on stderr, no JWT', async (t) => {
  const { rows } = await world.db.pool.query<{ next: number }>('SELECT max(id) + 1000 AS next FROM users');
  const cases: [string, number, RegExp][] = [
    ['a user who does not exist', rows[0]!.next, new RegExp(`^user ${rows[0]!.next} does not exist in this database: `)],
    ['an inactive employee', company.inactiveEmployeeId, new RegExp(`^user ${company.inactiveEmployeeId} is inactive: `)],
    [
      'an operator',
      company.operatorId,
      new RegExp(
        `^user ${company.operatorId} is not a Registered Employee \\(role OPERATOR\\): the API refuses its JWT, so none is minted`,
      ),
    ],
    ['a farmer', company.farmerIds[0]!, new RegExp(`^user ${company.farmerIds[0]} is not a Registered Employee \\(role FARMER\\)`)],
  ];
  for (const [who, userId, why] of cases) {
    const run = await mint([String(userId)]);
    t.equal(run.code, 2, `${who}: exit 2`);
    t.equal(run.stdout, '', `${who}: no JWT on stdout`);
    t.match(run.stderr, why, `${who}: says why`);
    t.equal(run.stderr.trim().split('\n').length, 1, `${who}: one line, no stack trace`);
  }
});

t.test('bad arguments: exit 2 with the usage; no database: exit 1', async (t) => {
  for (const args of [[], ['abc'], ['0'], ['99999999999'], ['1', '2'], [String(company.employeeId), '--ttl', '0'], ['--what']]) {
    const run = await mint(args);
    t.equal(run.code, 2, `${JSON.stringify(args)}: exit 2`);
    t.match(run.stderr, /usage: npm run mint-jwt -- <user_id> \[--ttl SECONDS\]/);
    t.equal(run.stdout, '');
  }
  const nowhere = await mint([String(company.employeeId)], {});
  t.equal(nowhere.code, 1);
  t.match(nowhere.stderr, /Invalid configuration: DATABASE_URL is required for npm run mint-jwt/);
  t.equal(nowhere.stdout, '', 'no JWT it could not check');
});
