// The service's own OpenAPI document as the contract tester reads it: its operations, their
// parameters and bodies, and one JSON Schema validator (ajv, formats on, strict mode off) that
// resolves every $ref from the document's components, for responses and for the tester's own
// requests (each generated value is checked against the schema it was generated from).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { App } from '../../src/types.js';

// ajv-formats is CommonJS: its default export is the plugin itself, or a namespace holding it
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

export type Schema = { [keyword: string]: unknown };

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema: Schema;
}

export interface MediaType {
  schema: Schema;
}

export interface ResponseObject {
  description?: string;
  headers?: Record<string, { description?: string; required?: boolean; schema?: Schema }>;
  content?: Record<string, MediaType>;
}

export interface OperationObject {
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
  security?: Array<Record<string, string[]>>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Schema>; securitySchemes?: Record<string, Schema> };
}

/** How an operation is authenticated, read from its `security` requirement. */
export type Audience = 'employee' | 'partner' | 'leak-reporter' | 'public' | 'operations';

export interface Operation {
  /** `GET /api/v1/api-tokens/{token_id}` */
  id: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** the JSON pointer of the operation in the document */
  pointer: string;
  operation: OperationObject;
  parameters: Parameter[];
  /** the application/json request body schema, when one is documented */
  body: Schema | null;
  bodyRequired: boolean;
  audience: Audience;
  /** the documented statuses, as numbers */
  statuses: Set<number>;
}

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);
const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
export const DOCUMENT_ID = 'urn:coldtrack:openapi';

export async function fetchDocument(app: App): Promise<OpenApiDocument> {
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`);
  return response.json<OpenApiDocument>();
}

/** Every operation of the document (paths x methods), in document order. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!HTTP_METHODS.has(method)) continue;
      const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      const audience: Audience = schemes.includes('employeeJwt')
        ? 'employee'
        : schemes.includes('apiToken')
          ? 'partner'
          : schemes.includes('leakReportSignature')
            ? 'leak-reporter'
            : operation.security
              ? 'public'
              : 'operations';
      if (schemes.some((scheme) => !['employeeJwt', 'apiToken', 'leakReportSignature'].includes(scheme))) {
        throw new Error(`${method.toUpperCase()} ${path}: unknown security scheme in ${JSON.stringify(operation.security)}`);
      }
      operations.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase() as Operation['method'],
        path,
        pointer: `/paths/${escapePointer(path)}/${method}`,
        operation,
        parameters: operation.parameters ?? [],
        body: operation.requestBody?.content['application/json']?.schema ?? null,
        bodyRequired: operation.requestBody?.required === true,
        audience,
        statuses: new Set(Object.keys(operation.responses).map(Number)),
      });
    }
  }
  return operations;
}

/** One validator over the whole document: any schema in it, by pointer, with its $refs. */
export class SchemaBook {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    // strict off: the document carries OpenAPI's own keywords next to JSON Schema's
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID } as object);
  }

  /** The schema a `$ref` names, followed until it is not a reference. */
  deref(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; typeof current.$ref === 'string'; hops++) {
      if (hops > 20) throw new Error(`$ref loop at ${String(current.$ref)}`);
      const ref = current.$ref as string;
      if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
      let target: unknown = this.document;
      for (const segment of ref.slice(2).split('/')) {
        target = (target as Record<string, unknown>)[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
      }
      if (!target || typeof target !== 'object') throw new Error(`$ref ${ref} names nothing`);
      current = target as Schema;
    }
    return current;
  }

  /** A validator for the schema at `pointer` (a JSON pointer into the document). */
  at(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({
        $ref: `${DOCUMENT_ID}#${pointer
          .split('/')
          .map((segment) => encodeURIComponent(segment).replace(/%7E/g, '~'))
          .join('/')}`,
      });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }

  /** A validator for a schema object taken from the document (its $refs point into the document). */
  of(schema: Schema): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema) as object);
      this.compiled.set(key, validate);
    }
    return validate;
  }

  valid(schema: Schema, value: unknown): boolean {
    return this.of(schema)(value) === true;
  }

  /** ajv's errors, one line each, for a diagnostic. */
  static errors(validate: ValidateFunction): string[] {
    return (validate.errors ?? [])
      .slice(0, 5)
      .map((error) => `${error.instancePath || '/'} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`);
  }
}

/** The schema with its local `#/...` references made absolute, so it compiles on its own. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${DOCUMENT_ID}${value}` : rebase(value),
    ]),
  );
}

/** The pointer of a response body schema: `<operation>/responses/<status>/content/application~1json/schema`. */
export const responseSchemaPointer = (operation: Operation, status: number) =>
  `${operation.pointer}/responses/${status}/content/application~1json/schema`;
