// GET /api/v1/analytics/impact (being built).
import type { App } from '../../types.js';

export default async function impactRoute(_app: App) {}
