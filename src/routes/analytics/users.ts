// GET /api/v1/analytics/users (being built).
import type { App } from '../../types.js';

export default async function usersRoute(_app: App) {}
