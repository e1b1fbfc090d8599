// GET /api/v1/me: the signed-in Registered Employee and their company, so a client (the console's
// header) names them instead of showing ids. The company is the employee's row's, like everywhere.
import { z } from 'zod';
import { loadQueries } from '../db/sql.js';
import { lookup } from '../db/pool.js';
import { errorResponses } from '../http/schemas.js';
import { employeeAuthHook } from '../plugins/employee-auth.js';
import type { App } from '../types.js';

const sql = loadQueries('employees', ['employeeProfile']);

const me = z
  .object({
    user_id: z.number().int(),
    name: z.string().nullable().describe('First and last name; null when the user record has none'),
    company_id: z.number().int(),
    company_name: z.string(),
  })
  .meta({ id: 'Me' });

export default async function meRoute(app: App) {
  app.addHook('onRequest', employeeAuthHook(app));

  app.get('/', {
    schema: {
      operationId: 'me',
      summary: 'The signed-in employee',
      description: 'The Registered Employee the JWT names and their company.',
      tags: ['Employees'],
      security: [{ employeeJwt: [] }],
      querystring: z.strictObject({}),
      response: { 200: me, ...errorResponses(400, 401, 403, 429, 503) },
    },
    handler: async (request) => {
      const { rows } = await lookup<z.infer<typeof me>>(app.db, sql.employeeProfile, [request.employee.userId]);
      // the auth hook has just read this user, with a company: only a concurrent delete could miss
      return rows[0]!;
    },
  });
}
