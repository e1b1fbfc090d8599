// Every route behind an API token: the analytics and the sensor history. The token-auth hooks
// (plugins/token-auth.ts) wrap all of them in one encapsulated context, every answer is counted
// in its token's usage (data-surface/usage-counting.ts), and every 200 carries an ETag that a
// request's If-None-Match can turn into a 304 (data-surface/conditional-requests.ts).
import { registerConditionalRequests } from '../data-surface/conditional-requests.js';
import { registerUsageCounting } from '../data-surface/usage-counting.js';
import { registerTokenAuth } from '../plugins/token-auth.js';
import type { App } from '../types.js';
import analyticsRoutes from './analytics/index.js';
import sensorDataRoutes from './sensor-data/index.js';

export default async function dataSurfaceRoutes(app: App) {
  registerTokenAuth(app);
  registerConditionalRequests(app);
  registerUsageCounting(app);
  await app.register(analyticsRoutes, { prefix: '/analytics' });
  await app.register(sensorDataRoutes);
}
