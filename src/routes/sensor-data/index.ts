// /api/v1/sensor-data*: the data surface's sensor history (token auth is applied by ../data-surface.ts).
import type { App } from '../../types.js';
import historyRoute from './history.js';

export default async function sensorDataRoutes(app: App) {
  await app.register(historyRoute);
}
