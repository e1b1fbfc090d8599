// /api/v1/analytics/*: the data surface's analytics (token auth is applied by ../data-surface.ts).
import type { App } from '../../types.js';
import impactRoute from './impact.js';
import revenueRoute from './revenue.js';
import usersRoute from './users.js';
import utilizationRoute from './utilization.js';

export default async function analyticsRoutes(app: App) {
  await app.register(usersRoute);
  await app.register(utilizationRoute);
  await app.register(revenueRoute);
  await app.register(impactRoute);
}
