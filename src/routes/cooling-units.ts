// GET /api/v1/cooling-units: the caller's company's live units and their locations, for a
// Registered Employee choosing the units a token may read (the console's unit picker).
// Soft-deleted units and other companies' units never appear.
import { z } from 'zod';
import { loadQueries } from '../db/sql.js';
import { envelopeSchema, errorResponses, paginationFor, paginationQuery } from '../http/schemas.js';
import { employeeAuthHook } from '../plugins/employee-auth.js';
import type { App } from '../types.js';

const sql = loadQueries('cooling-units-directory', ['liveUnitsPage', 'countLiveUnits']);

const coolingUnit = z
  .object({
    id: z.number().int(),
    name: z.string(),
    location: z.object({ id: z.number().int(), name: z.string() }),
  })
  .meta({ id: 'CoolingUnit' });

interface UnitRow {
  id: number;
  name: string;
  location_id: number;
  location_name: string;
}

export default async function coolingUnitRoutes(app: App) {
  app.addHook('onRequest', employeeAuthHook(app));

  app.get('/', {
    schema: {
      operationId: 'listCoolingUnits',
      summary: 'List cooling units',
      description: 'The company’s live (not deleted) cooling units, by id: the units a token can be restricted to.',
      tags: ['Cooling units'],
      security: [{ employeeJwt: [] }],
      querystring: z.strictObject(paginationQuery),
      response: {
        200: envelopeSchema(coolingUnit, z.object({})),
        ...errorResponses(400, 401, 403, 429, 503),
      },
    },
    handler: async (request) => {
      const { companyId } = request.employee;
      const { page, page_size: pageSize } = request.query;
      const [units, count] = await Promise.all([
        app.db.query<UnitRow>(sql.liveUnitsPage, [companyId, pageSize, (page - 1) * pageSize]),
        app.db.query<{ total_count: number }>(sql.countLiveUnits, [companyId]),
      ]);
      return {
        data: units.rows.map((unit) => ({ id: unit.id, name: unit.name, location: { id: unit.location_id, name: unit.location_name } })),
        meta: { company_id: companyId, filters: {}, pagination: paginationFor(page, pageSize, count.rows[0]!.total_count) },
      };
    },
  });
}
