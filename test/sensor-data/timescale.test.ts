// The sensor history suite on the timescale storage profile: a hypertable and real-time
// continuous aggregates, on PGlite + TimescaleDB (test/helpers/timescale.ts). Two differences of
// the harness, not of the expectations: PGlite's wire protocol cannot COPY FROM STDIN, so the
// ingest uses its INSERT transport; and TimescaleDB's job scheduler does not run in PGlite, so
// the suite materializes the aggregates itself where a refresh policy would have.
import t from 'tap';
import { createTestApp } from '../helpers/app.js';
import { createTimescaleDatabase } from '../helpers/timescale.js';
import { sensorDataSuite } from './suite.js';

t.test('sensor history, timescale profile', async (t) => {
  const database = await createTimescaleDatabase(t);
  const ctx = await createTestApp(t, {}, { database });
  await sensorDataSuite(t, { ctx, profile: 'timescale', transport: 'insert' });
});
