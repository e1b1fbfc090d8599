// GET /api/v1/sensor-data (being built).
import type { App } from '../types.js';

export default async function sensorDataRoute(_app: App) {}
