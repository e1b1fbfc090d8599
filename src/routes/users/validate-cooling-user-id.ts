// POST /v1/users/validate-cooling-user-id/ (being built).
import type { App } from '../../types.js';

export default async function validateCoolingUserIdRoute(_app: App) {}
