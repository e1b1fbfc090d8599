// The sensor history suite on the postgres storage profile: the local PostgreSQL, native
// partitions and trigger-maintained rollups.
import t from 'tap';
import { createTestApp } from '../helpers/app.js';
import { sensorDataSuite } from './suite.js';

t.test('sensor history, postgres profile', async (t) => {
  const ctx = await createTestApp(t);
  await sensorDataSuite(t, { ctx, profile: 'postgres', transport: 'copy' });
});
