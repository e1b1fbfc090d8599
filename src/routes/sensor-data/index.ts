// /api/v1/sensor-data*: the data surface's sensor history, its change feed and bulk pulls (token auth is applied by ../data-surface.ts).
import type { App } from '../../types.js';
import bulkRoute from './bulk.js';
import changesRoute from './changes.js';
import historyRoute from './history.js';

export default async function sensorDataRoutes(app: App) {
  await app.register(historyRoute);
  await app.register(changesRoute);
  await app.register(bulkRoute);
}
