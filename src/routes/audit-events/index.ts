// /api/v1/audit-events: the company's token audit trail, behind a Registered Employee's JWT.
import { employeeAuthHook } from '../../plugins/employee-auth.js';
import type { App } from '../../types.js';
import listAuditEvents from './list.js';

export default async function auditEventRoutes(app: App) {
  app.addHook('onRequest', employeeAuthHook(app));
  await app.register(listAuditEvents);
}
