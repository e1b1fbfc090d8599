// Every check a response goes through, and the ledger that counts them per operation. The checks
// on the answer itself (no 5xx, a documented status, JSON, the documented schema, the documented
// headers with their types, the contract's error code) hold for every request; the checks on the
// outcome compare it with what the contract answers to that request (expectations.ts).
import type { LightMyRequestResponse } from 'fastify';
import { describe, type Example } from './examples.js';
import type { Expectation } from './expectations.js';
import { responseSchemaPointer, SchemaBook, type Operation, type Schema } from './openapi.js';

export type Check =
  | 'no 5xx'
  | 'status is documented'
  | 'body is application/json'
  | 'body matches the documented schema'
  | 'documented headers present, with their types'
  | 'error code matches the status (contract, "Errors")'
  | '401 carries a Bearer challenge'
  | 'no 429 (budgets lifted)'
  | 'document-valid input is accepted (not 400)'
  | 'status is what the contract answers'
  | 'details.field names the problem'
  | 'details.required_scope names the missing permission';

export interface Finding {
  check: Check;
  detail: string;
}

// 400: invalid_cursor is the change feed's refusal of a since it did not issue (details.field: since)
const ERROR_CODES: Record<number, string | string[]> = {
  400: ['invalid_request', 'invalid_cursor'],
  401: 'unauthorized',
  403: 'insufficient_scope',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
  410: 'cursor_expired',
  503: 'unavailable',
};

type ErrorBody = { error?: { code?: string; details?: Record<string, unknown> } };

export function parseBody(response: LightMyRequestResponse): unknown {
  try {
    return JSON.parse(response.body);
  } catch {
    return undefined;
  }
}

/** The checks every answer of the operation must pass, whatever was asked. */
export function checkAnswer(book: SchemaBook, operation: Operation, response: LightMyRequestResponse): Finding[] {
  const findings: Finding[] = [];
  const status = response.statusCode;
  if (status >= 500) findings.push({ check: 'no 5xx', detail: `${status} ${response.body.slice(0, 200)}` });
  const answer = operation.operation.responses[String(status)];
  if (!answer) findings.push({ check: 'status is documented', detail: `${status} is not among ${[...operation.statuses].join(', ')}` });
  const contentType = String(response.headers['content-type'] ?? '');
  // an answer documented as another type only (a bulk pull's CSV or NDJSON) is that type instead
  const documentedTypes = Object.keys(answer?.content ?? {});
  const otherType = documentedTypes.length > 0 && !documentedTypes.includes('application/json');
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (response.body.length > 0 && (otherType ? !documentedTypes.includes(mediaType) : !/^application\/json\s*(;|$)/i.test(contentType))) {
    findings.push({ check: 'body is application/json', detail: `Content-Type: ${contentType || '(none)'}` });
  }
  const body = otherType ? undefined : parseBody(response);
  if (otherType) {
    // a stream of text: its type is checked above, its records by the route's own tests
  } else if (answer?.content?.['application/json']) {
    const validate = book.at(responseSchemaPointer(operation, status));
    if (body === undefined)
      findings.push({ check: 'body matches the documented schema', detail: `not JSON: ${response.body.slice(0, 120)}` });
    else if (!validate(body))
      findings.push({ check: 'body matches the documented schema', detail: SchemaBook.errors(validate).join('; ') });
  } else if (answer && response.body.length > 0) {
    findings.push({
      check: 'body matches the documented schema',
      detail: `${status} documents no body, got ${response.body.slice(0, 80)}`,
    });
  }
  // a documented header is one the answer carries (X-Request-Id everywhere, the limits' headers,
  // Retry-After, WWW-Authenticate), its text read as its schema's type (simple style)
  for (const [name, header] of Object.entries(answer?.headers ?? {})) {
    const value = response.headers[name.toLowerCase()];
    if (value === undefined) {
      findings.push({ check: 'documented headers present, with their types', detail: `${name} missing on ${status}` });
      continue;
    }
    const text = Array.isArray(value) ? value.join(',') : String(value);
    const schema = (header.schema as Schema | undefined) ?? {};
    const typed = (schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    if (!book.valid(schema, typed) || text.length === 0)
      findings.push({
        check: 'documented headers present, with their types',
        detail: `${name}: ${JSON.stringify(text)} is not ${JSON.stringify(schema)}`,
      });
  }
  if (status >= 400 && ERROR_CODES[status]) {
    const code = (body as ErrorBody | undefined)?.error?.code;
    // a partner's token used from outside its IP allow-list: the contract's other 403
    const allowed = [ERROR_CODES[status]].flat().concat(status === 403 && operation.audience === 'partner' ? ['ip_not_allowed'] : []);
    if (!allowed.includes(String(code)))
      findings.push({
        check: 'error code matches the status (contract, "Errors")',
        detail: `${status} with code ${JSON.stringify(code)}, the contract says ${[ERROR_CODES[status]].flat().join(' or ')}`,
      });
  }
  // a leak report's credential is a signature (GitHub's scheme), every other one a bearer token
  const scheme = operation.audience === 'leak-reporter' ? /^Signature\b/ : /^Bearer\b/;
  if (status === 401 && !scheme.test(String(response.headers['www-authenticate'] ?? ''))) {
    findings.push({
      check: '401 carries a Bearer challenge',
      detail: `WWW-Authenticate: ${String(response.headers['www-authenticate'] ?? '(none)')}`,
    });
  }
  return findings;
}

/** The checks of the outcome against what the contract answers to this request. */
export function checkOutcome(example: Example, expectation: Expectation, response: LightMyRequestResponse): Finding[] {
  const findings: Finding[] = [];
  const status = response.statusCode;
  const body = parseBody(response) as ErrorBody | undefined;
  if (status === 429) findings.push({ check: 'no 429 (budgets lifted)', detail: 'a rate limit answered: the check it hid did not run' });
  if (example.group === 'valid' && status === 400 && expectation.violations.every((violation) => violation.gap)) {
    findings.push({
      check: 'document-valid input is accepted (not 400)',
      detail: `400 ${JSON.stringify(body?.error ?? null).slice(0, 220)}${expectation.violations.length ? ` (the contract's rule: ${expectation.why})` : ''}`,
    });
  }
  if (!expectation.statuses.includes(status)) {
    findings.push({
      check: 'status is what the contract answers',
      detail: `${status}, expected ${expectation.statuses.join(' or ')} (${expectation.why}): ${response.body.slice(0, 200)}`,
    });
  }
  if (status === 400 && expectation.fields) {
    const field = body?.error?.details?.field;
    if (typeof field !== 'string' || !expectation.fields.includes(field)) {
      findings.push({
        check: 'details.field names the problem',
        detail: `details.field ${JSON.stringify(field)}, expected ${expectation.fields.map((name) => JSON.stringify(name)).join(' or ')} (${expectation.why})`,
      });
    }
  }
  if (status === 403 && expectation.requiredScope) {
    const scope = body?.error?.details?.required_scope;
    if (scope !== expectation.requiredScope)
      findings.push({
        check: 'details.required_scope names the missing permission',
        detail: `required_scope ${JSON.stringify(scope)}, expected ${JSON.stringify(expectation.requiredScope)}`,
      });
  }
  return findings;
}

export interface Failure {
  operation: string;
  group: string;
  kind: string;
  check: Check;
  detail: string;
  request: string;
  status: number;
  /** the todo text when the failure is a known disagreement of src/ with the document */
  todo?: string;
}

/** Counts per operation, and every failure with the request that showed it. */
export class Ledger {
  readonly examples = new Map<string, { valid: number; invalid: number; statuses: Map<number, number>; kinds: Set<string> }>();
  readonly failures: Failure[] = [];
  /** checks run per operation (a check that ran and never failed passes) */
  readonly ran = new Map<string, Set<Check>>();

  count(operation: Operation, example: Example, status: number) {
    const entry = this.examples.get(operation.id) ?? {
      valid: 0,
      invalid: 0,
      statuses: new Map<number, number>(),
      kinds: new Set<string>(),
    };
    entry[example.group]++;
    entry.kinds.add(example.kind);
    entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    this.examples.set(operation.id, entry);
  }

  checked(operation: Operation, checks: Check[]) {
    const set = this.ran.get(operation.id) ?? new Set<Check>();
    for (const check of checks) set.add(check);
    this.ran.set(operation.id, set);
  }

  fail(example: Example, response: LightMyRequestResponse, finding: Finding, todo: string | undefined) {
    this.failures.push({
      operation: example.operation.id,
      group: example.group,
      kind: example.kind,
      check: finding.check,
      detail: finding.detail,
      request: describe(example),
      status: response.statusCode,
      ...(todo ? { todo } : {}),
    });
  }
}

export const ANSWER_CHECKS: Check[] = [
  'no 5xx',
  'status is documented',
  'body is application/json',
  'body matches the documented schema',
  'documented headers present, with their types',
  'error code matches the status (contract, "Errors")',
];
export const OUTCOME_CHECKS: Check[] = ['no 429 (budgets lifted)', 'status is what the contract answers'];
