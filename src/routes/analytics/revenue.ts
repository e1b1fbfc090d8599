// GET /api/v1/analytics/revenue (being built).
import type { App } from '../../types.js';

export default async function revenueRoute(_app: App) {}
