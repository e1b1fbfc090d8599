// /api/v1/api-tokens: the management surface, all behind a Registered Employee's JWT.
import { employeeAuthHook } from '../../plugins/employee-auth.js';
import type { App } from '../../types.js';
import createApiToken from './create.js';
import listApiTokens from './list.js';
import retrieveApiToken from './retrieve.js';
import revokeApiToken from './revoke.js';
import rotateApiToken from './rotate.js';
import apiTokenUsage from './usage.js';

export default async function apiTokenRoutes(app: App) {
  app.addHook('onRequest', employeeAuthHook(app));
  await app.register(createApiToken);
  await app.register(listApiTokens);
  await app.register(retrieveApiToken);
  await app.register(revokeApiToken);
  await app.register(rotateApiToken);
  await app.register(apiTokenUsage);
}
