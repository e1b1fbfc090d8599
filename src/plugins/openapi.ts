// OpenAPI 3.1 generated from the zod schemas the routes validate with: /openapi.json and a
// browsable reference at /docs (static assets ship in the package: no network needed).
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { documentResponses } from '../http/openapi-responses.js';
import type { App } from '../types.js';

type OpenApiDocument = { components?: { schemas?: Record<string, unknown> } } & Record<string, unknown>;

/**
 * The zod provider emits every named schema twice, as `X` (responses) and `XInput` (requests),
 * although the request side names none of them: the `*Input` copies nobody references go, so the
 * document has one schema per shape.
 */
/**
 * @fastify/swagger marks every request body required; a body whose schema also admits null
 * (revoke's and rotate's: nothing to say, or an empty object) is optional, and the document says so.
 */
export function optionalBodiesOptional(document: OpenApiDocument): OpenApiDocument {
  type Body = { required?: boolean; content?: Record<string, { schema?: { anyOf?: Array<{ type?: string }> } }> };
  const paths = (document.paths ?? {}) as Record<string, Record<string, { requestBody?: Body }>>;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      if (schema?.anyOf?.some((option) => option.type === 'null')) operation.requestBody!.required = false;
    }
  }
  return document;
}

export function withoutUnusedInputSchemas(document: OpenApiDocument): OpenApiDocument {
  const schemas = document.components?.schemas;
  if (!schemas) return document;
  const { components, ...rest } = document;
  const referenced = JSON.stringify(rest) + JSON.stringify({ ...components, schemas: undefined });
  let kept = Object.entries(schemas);
  // a kept schema may itself reference an Input copy: repeat until nothing more goes
  for (let dropped = true; dropped;) {
    const text = referenced + JSON.stringify(kept);
    const next = kept.filter(([name]) => !name.endsWith('Input') || text.includes(`"#/components/schemas/${name}"`));
    dropped = next.length < kept.length;
    kept = next;
  }
  return { ...document, components: { ...components, schemas: Object.fromEntries(kept) } };
}

/** CSP hash of the inline style swagger-ui (@fastify/swagger-ui 5.2.6) sets while rendering. */
const SWAGGER_UI_INLINE_STYLE = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';

async function openApi(app: App) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'ColdTrack partner API',
        version: '1.0.0',
        description: 'API-token management for Registered Employees and read-only analytics and sensor history for partner servers.',
        // the API is not open source: used under the partner agreement, which SPDX has no identifier
        // for (a LicenseRef- is SPDX's form for such a licence); docs/partners.md, "The OpenAPI document"
        license: { name: 'Proprietary: ColdTrack partner agreement', identifier: 'LicenseRef-ColdTrack-Partner-Agreement' },
        contact: { name: 'ColdTrack partner support', email: 'partners@coldtrack.example' },
      },
      // PUBLIC_BASE_URL; by default "/", the origin the document was fetched from
      servers: [{ url: app.config.publicBaseUrl, description: 'This deployment' }],
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
          leakReportSignature: {
            type: 'apiKey',
            in: 'header',
            name: 'Github-Public-Key-Signature',
            description:
              "GitHub's secret scanning signature (leak reports): ECDSA P-256 over SHA-256 of the raw body, DER in base64, " +
              'by the key Github-Public-Key-Identifier names (one of LEAK_REPORT_PUBLIC_KEYS)',
          },
        },
      },
    },
    // a collection route registered as '/' under its prefix answers with and without the slash;
    // the document names it as the spec does (/api/v1/api-tokens). The validate endpoint keeps
    // its slash: the spec lists it with one.
    transform: (input) => {
      const transformed = jsonSchemaTransform({
        ...input,
        url: input.url.startsWith('/api/') && input.url.endsWith('/') ? input.url.slice(0, -1) : input.url,
      });
      if (!transformed.schema || (transformed.schema as { hide?: boolean }).hide) return transformed;
      return {
        ...transformed,
        schema: documentResponses(transformed.url, transformed.schema as Parameters<typeof documentResponses>[1], {
          conditional: input.route.config?.conditional !== undefined,
        }) as typeof transformed.schema,
      };
    },
    transformObject: (input) =>
      optionalBodiesOptional(withoutUnusedInputSchemas(jsonSchemaTransformObject(input) as OpenApiDocument)) as ReturnType<
        typeof jsonSchemaTransformObject
      >,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // the reference reads the one documented URL (/openapi.json), and its top bar says so
    uiConfig: { urls: [{ url: '/openapi.json', name: 'ColdTrack partner API (/openapi.json)' }] },
    // no third-party origin and no inline code; the one inline style swagger-ui applies as it
    // renders is allowed by its hash (a browser test fails when a new swagger-ui changes it)
    staticCSP: [
      "default-src 'self'",
      "base-uri 'self'",
      "font-src 'self' data:",
      "frame-ancestors 'none'",
      "img-src 'self' data:",
      "object-src 'none'",
      "script-src 'self'",
      "script-src-attr 'none'",
      `style-src 'self' '${SWAGGER_UI_INLINE_STYLE}'`,
      "connect-src 'self'",
      "form-action 'self'",
    ].join('; '),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openApi, { name: 'openapi' });
