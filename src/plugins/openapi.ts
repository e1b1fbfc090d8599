// OpenAPI 3.1 generated from the zod schemas the routes validate with: /openapi.json and a
// browsable reference at /docs (static assets ship in the package: no network needed).
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { App } from '../types.js';

export async function registerOpenApi(app: App) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'ColdTrack partner API',
        version: '1.0.0',
        description:
          'API-token management for Registered Employees and read-only analytics and sensor history for partner servers.',
      },
      components: {
        securitySchemes: {
          employeeJwt: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'A Registered Employee JWT (management endpoints)',
          },
          apiToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API token `ctk_...` (data endpoints)',
          },
        },
      },
    },
    // a collection route registered as '/' under its prefix answers with and without the slash;
    // the document names it as the spec does (/api/v1/api-tokens). The validate endpoint keeps
    // its slash: the spec lists it with one.
    transform: (input) =>
      jsonSchemaTransform({ ...input, url: input.url.startsWith('/api/') && input.url.endsWith('/') ? input.url.slice(0, -1) : input.url }),
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
