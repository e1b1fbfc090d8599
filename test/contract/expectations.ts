// What the contract answers to a request the document calls valid. The document's schemas say
// what a request may look like; docs/contract.md adds rules a schema does not carry (real
// calendar days, the window's length, units of the caller's company, a future expiry). A request
// that breaks one of them is refused with 400 naming the field. When the rule could be written in
// the schema (a format, uniqueItems, a pattern) or in the operation's prose and is not, the
// document and the service disagree: the refusal is still checked, and the "document-valid input
// is accepted" assertion it fails is a todo naming what src/ must document.
import { parseAllowedIp } from '../../src/tokens/allowed-ips.js';
import type { Operation } from './openapi.js';
import type { Example } from './examples.js';
import { isWebhookOperation, webhookBodyViolations, webhookOutcome } from './webhooks.js';
import { scopeOf, type World } from './world.js';

export interface Violation {
  field: string;
  rule: string;
  /** set when the document does not state the rule: what src/ must fix */
  gap?: string;
}

export interface Expectation {
  statuses: number[];
  /** for a 400: the fields the answer may name */
  fields?: string[];
  /** for a 403: the scope the answer must name */
  requiredScope?: string;
  why: string;
  violations: Violation[];
}

const DAY_MS = 86_400_000;
// the service's reading (src/routes/sensor-data/history.ts): comma-separated, spaces around a name allowed, a repeat folded
const SPECIFICATION_TYPES = /^ *(TEMPERATURE|HUMIDITY) *(, *(TEMPERATURE|HUMIDITY) *)*$/;
// the latest instant that prints as a 4-digit-year ISO timestamp in UTC
const LATEST_EXPIRY = Date.parse('9999-12-31T23:59:59.999Z');

/** Milliseconds of 00:00 UTC of a real calendar day of the years 1..9999, or null. */
export function realDay(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date.getTime() : null;
}

/** Every description of the operation and its parameters: where prose states a rule. */
const proseOf = (operation: Operation) =>
  [operation.operation.summary, operation.operation.description, ...operation.parameters.map((p) => p.description)]
    .filter(Boolean)
    .join('\n');

const parameterSchema = (operation: Operation, name: string) => operation.parameters.find((p) => p.name === name)?.schema ?? {};

function windowViolations(world: World, operation: Operation, query: Record<string, string>): Violation[] {
  const violations: Violation[] = [];
  const prose = proseOf(operation);
  for (const name of ['start_date', 'end_date']) {
    const text = query[name];
    if (text === undefined || realDay(text) !== null) continue;
    violations.push({
      field: name,
      rule: `${name}=${text} is not a real calendar day (contract: real calendar dates 0001-01-01..9999-12-31)`,
      ...(parameterSchema(operation, name).format === 'date'
        ? {}
        : {
            gap: `src: ${operation.id}: ${name} is documented as the pattern \\d{4}-\\d{2}-\\d{2} only (no format: date), so a day that does not exist (2024-13-45) is document-valid, and the service refuses it (rightly, per the contract): document format: date`,
          }),
    });
  }
  if (violations.length > 0) return violations;
  const end = query.end_date !== undefined ? realDay(query.end_date)! : realDay(world.today)!;
  const start = query.start_date !== undefined ? realDay(query.start_date)! : end - 29 * DAY_MS;
  if (end < start) {
    violations.push({
      field: 'end_date',
      rule: 'end_date before start_date',
      ...(/before start_date|end_date must not|start_date .*(<=|≤|not after)/i.test(prose)
        ? {}
        : {
            gap: `src: ${operation.id}: end_date before start_date is refused (contract: 400), and no description of the operation says so`,
          }),
    });
    return violations;
  }
  const days = (end - start) / DAY_MS + 1;
  const daily = query.aggregation === 'daily' && /sensor/.test(operation.path);
  const longest = daily ? 3660 : 366;
  if (days > longest) {
    violations.push({
      field: query.start_date !== undefined ? 'start_date' : 'end_date',
      rule: `a window of ${days} days (longest ${longest})`,
      ...(prose.includes('366')
        ? {}
        : {
            gap: `src: ${operation.id}: a window longer than 366 days is refused (contract: "Longest window: 366 days"), and no description of the operation says so`,
          }),
    });
  }
  return violations;
}

function bodyViolations(world: World, operation: Operation, body: Record<string, unknown>): Violation[] {
  const violations: Violation[] = [];
  const object = world.book.deref(operation.body!);
  const properties = (object.properties ?? {}) as Record<string, Record<string, unknown>>;
  // the service trims text fields (the contract says so of a token's name) and then refuses an
  // empty one: a blank text the schema allows (minLength 1, no pattern against blanks) is refused
  for (const [name, value] of Object.entries(body)) {
    const schema = properties[name];
    if (typeof value !== 'string' || value.trim() !== '' || typeof schema?.minLength !== 'number' || schema.minLength < 1) continue;
    violations.push({
      field: name,
      rule: `${name} ${JSON.stringify(value)}: blank (trimmed: empty)`,
      gap: `src: ${operation.id}: a ${name} of whitespace only (" ") is document-valid (minLength ${schema.minLength}, pattern ${String(schema.pattern)}), but the service trims it and refuses it as empty; the document's ${name} schema must say what the service accepts (trimmed, non-blank)`,
    });
  }
  for (const name of ['scopes', 'cooling_unit_ids']) {
    const list = body[name];
    if (!Array.isArray(list) || new Set(list).size === list.length) continue;
    violations.push({
      field: name,
      rule: `${name} repeats an item (contract: distinct)`,
      ...(properties[name]?.uniqueItems === true
        ? {}
        : {
            gap: `src: ${operation.id}: ${name} has no uniqueItems in the document, and the service refuses a repeated item (contract: distinct): document uniqueItems: true`,
          }),
    });
  }
  if (Array.isArray(body.cooling_unit_ids)) {
    const foreign = (body.cooling_unit_ids as unknown[]).filter((id) => !world.company.liveUnits.includes(id as number));
    if (foreign.length > 0) {
      const described = String(properties.cooling_unit_ids?.description ?? '');
      violations.push({
        field: 'cooling_unit_ids',
        rule: `units that are not live units of the company: ${foreign.slice(0, 5).join(', ')}`,
        ...(/\blive\b|\b(of|in) (the|your|its|the employee's) company\b/i.test(described)
          ? {}
          : {
              gap: `src: ${operation.id}: cooling_unit_ids must be live units of the employee's company (contract), and the document only says "${described}"`,
            }),
      });
    }
  }
  if (Array.isArray(body.allowed_ips)) {
    // the service's reading: each entry an address or a CIDR without host bits, distinct once normalised
    const seen = new Set<string>();
    const wrong = (body.allowed_ips as unknown[]).find((entry) => {
      if (typeof entry !== 'string') return false; // a type the document refuses: not a contract rule
      const parsed = parseAllowedIp(entry);
      if (!parsed.ok || seen.has(parsed.cidr)) return true;
      seen.add(parsed.cidr);
      return false;
    });
    if (wrong !== undefined) {
      const described = String(properties.allowed_ips?.description ?? '');
      violations.push({
        field: 'allowed_ips',
        rule: `allowed_ips entry ${JSON.stringify(wrong).slice(0, 60)}: not an address or CIDR without host bits, or a repeat`,
        ...(/addresses and CIDRs/i.test(described) && /host bits/i.test(described) && /each once/i.test(described)
          ? {}
          : {
              gap: `src: ${operation.id}: allowed_ips entries must be distinct IP addresses or CIDRs without host bits (contract), and the document only says "${described}"`,
            }),
      });
    }
  }
  if (isWebhookOperation(operation)) violations.push(...webhookBodyViolations(world, operation, object, body));
  if (typeof body.expires_at === 'string') {
    const instant = Date.parse(body.expires_at.replace(/T(\d\d:\d\d)(Z|[+-])/, 'T$1:00$2'));
    const described = String((properties.expires_at as { description?: string } | undefined)?.description ?? '');
    if (Number.isFinite(instant) && instant <= world.ctx.clock.now().getTime()) {
      violations.push({
        field: 'expires_at',
        rule: 'expires_at not in the future',
        ...(/future/i.test(described)
          ? {}
          : { gap: `src: ${operation.id}: expires_at must be in the future, and the document does not say so` }),
      });
    } else if (Number.isFinite(instant) && instant > LATEST_EXPIRY) {
      violations.push({
        field: 'expires_at',
        rule: `expires_at ${body.expires_at}: after 9999-12-31T23:59:59Z (UTC)`,
        gap: `src: ${operation.id}: an expires_at after 9999-12-31T23:59:59Z in UTC (9999-12-31T23:00:00-05:00) is refused, and the document allows it`,
      });
    } else if (!Number.isFinite(instant)) {
      // a date-time JavaScript cannot read (year 0000 in a zone...): the service decides; recorded by the answer
    }
  }
  return violations;
}

async function tokenState(world: World, tokenId: string) {
  const response = await world.ctx.app.inject({
    method: 'GET',
    url: `/api/v1/api-tokens/${tokenId}`,
    headers: { authorization: `Bearer ${world.jwt.employee}` },
  });
  if (response.statusCode !== 200) return null;
  return response.json<{ revoked: boolean; replaced_by: string | null; expires_at: string | null }>();
}

/** The contract's rules beyond the schemas that a document-valid example breaks. */
export function contractViolations(world: World, example: Example): Violation[] {
  const { operation } = example;
  const query = Object.fromEntries(example.query);
  const violations: Violation[] = [];
  if (operation.audience === 'partner') violations.push(...windowViolations(world, operation, query));
  if (query.specification_type !== undefined && !SPECIFICATION_TYPES.test(query.specification_type)) {
    const schema = parameterSchema(operation, 'specification_type');
    violations.push({
      field: 'specification_type',
      rule: `specification_type ${JSON.stringify(query.specification_type)} (TEMPERATURE, HUMIDITY or both)`,
      ...(schema.enum || schema.pattern
        ? {}
        : {
            gap: `src: ${operation.id}: specification_type is documented as any string (schema {type: string}; the list is in prose only), and the service refuses anything but TEMPERATURE, HUMIDITY or both comma-separated: document a pattern`,
          }),
    });
  }
  if (operation.body && example.bodyValue && typeof example.bodyValue === 'object' && !Array.isArray(example.bodyValue)) {
    violations.push(...bodyViolations(world, operation, example.bodyValue as Record<string, unknown>));
  }
  violations.push(
    ...(parameterSchema(operation, 'from').format === 'date'
      ? dayWindowViolations(world, operation, query)
      : instantWindowViolations(operation, query)),
  );
  violations.push(...cursorViolations(operation, query));
  return violations;
}

/** A token's usage window: from/to days (default: the 30 days to today), to not before from, at most 90 days. */
function dayWindowViolations(world: World, operation: Operation, query: Record<string, string>): Violation[] {
  const to = query.to !== undefined ? realDay(query.to) : realDay(world.today);
  const from = query.from !== undefined ? realDay(query.from) : to === null ? null : to - 29 * DAY_MS;
  if (from === null || to === null) return [];
  const prose = proseOf(operation);
  if (to < from) {
    return [
      {
        field: 'to',
        rule: 'to before from',
        ...(/to before from/i.test(prose)
          ? {}
          : { gap: `src: ${operation.id}: to before from is refused, and no description of the operation says so` }),
      },
    ];
  }
  const days = (to - from) / DAY_MS + 1;
  if (days <= 90) return [];
  return [
    {
      field: query.from !== undefined ? 'from' : 'to',
      rule: `a window of ${days} days (longest 90)`,
      ...(/up to 90 days/.test(prose)
        ? {}
        : { gap: `src: ${operation.id}: a window longer than 90 days is refused, and no description of the operation says so` }),
    },
  ];
}

/**
 * The change feed's since: "now", or a cursor the service gave this company (contract: 400
 * invalid_cursor otherwise). A generated text of the cursor's shape is never one: the service
 * signs its cursors.
 */
function cursorViolations(operation: Operation, query: Record<string, string>): Violation[] {
  return [...sinceViolations(operation, query), ...walkCursorViolations(operation, query)];
}

function sinceViolations(operation: Operation, query: Record<string, string>): Violation[] {
  if (query.since === undefined || query.since === 'now') return [];
  const described = String(operation.parameters.find((p) => p.name === 'since')?.description ?? '');
  return [
    {
      field: 'since',
      rule: `since=${query.since}: not a cursor the service gave`,
      ...(/next_cursor/.test(described)
        ? {}
        : { gap: `src: ${operation.id}: since must be a next_cursor the service gave, and the document does not say so` }),
    },
  ];
}

/**
 * Sensor history's cursor: one the service gave this company for the walk's filters (400
 * invalid_cursor otherwise: a generated text of its shape is never one, the service seals its
 * cursors), and never beside a page number (400 naming page).
 */
function walkCursorViolations(operation: Operation, query: Record<string, string>): Violation[] {
  if (query.cursor === undefined) return [];
  const described = String(operation.parameters.find((p) => p.name === 'cursor')?.description ?? '');
  const violations: Violation[] = [
    {
      field: 'cursor',
      rule: `cursor=${query.cursor}: not a cursor the service gave`,
      ...(/next_cursor/.test(described)
        ? {}
        : { gap: `src: ${operation.id}: cursor must be a next_cursor the service gave, and the document does not say so` }),
    },
  ];
  if (query.page !== undefined) {
    violations.push({
      field: 'page',
      rule: 'page beside cursor',
      ...(/not with page/.test(described)
        ? {}
        : { gap: `src: ${operation.id}: page and cursor together are refused, and the document does not say so` }),
    });
  }
  return violations;
}

/** The audit trail's from/to: instants on days of the years 0001-9999, to not before from. */
function instantWindowViolations(operation: Operation, query: Record<string, string>): Violation[] {
  const violations: Violation[] = [];
  for (const name of ['from', 'to']) {
    const text = query[name];
    if (text === undefined || !text.startsWith('0000-')) continue;
    const described = String(operation.parameters.find((p) => p.name === name)?.description ?? '');
    violations.push({
      field: name,
      rule: `${name}=${text}: the year 0000 is no calendar year`,
      ...(/0001/.test(described)
        ? {}
        : { gap: `src: ${operation.id}: ${name} in the year 0000 is refused, and the document does not say the years start at 0001` }),
    });
  }
  if (violations.length > 0 || query.from === undefined || query.to === undefined) return violations;
  const [from, to] = [Date.parse(query.from), Date.parse(query.to)];
  if (Number.isFinite(from) && Number.isFinite(to) && to < from) {
    violations.push({
      field: 'to',
      rule: 'to before from',
      ...(/to before from/i.test(proseOf(operation))
        ? {}
        : { gap: `src: ${operation.id}: to before from is refused, and no description of the operation says so` }),
    });
  }
  return violations;
}

/** What the contract answers to a document-valid example (asked before the example is sent). */
export async function expectValid(world: World, example: Example): Promise<Expectation> {
  const { operation } = example;
  const query = Object.fromEntries(example.query);
  const success = [...operation.statuses].filter((status) => status >= 200 && status < 300);
  const violations = contractViolations(world, example);

  let statuses: number[];
  let why: string;
  let requiredScope: string | undefined;
  if (operation.audience === 'employee' && example.credential === 'non-employee JWT') {
    statuses = [403];
    requiredScope = 'registered_employee';
    why = 'a valid JWT of a user who is not a Registered Employee';
  } else if (operation.audience === 'partner') {
    const scope = scopeOf(world, operation);
    const token =
      example.credential === 'token: all scopes'
        ? world.tokens.all
        : example.credential === 'token: all scopes, one unit'
          ? world.tokens.restricted
          : world.tokens.byScope.get(example.credential.replace(/^token: | only$/g, ''))!;
    if (!token.scopes.includes(scope)) {
      statuses = [403];
      requiredScope = scope;
      why = `the token lacks the ${scope} scope`;
    } else {
      const readable = token.units.length > 0 ? token.units : world.company.liveUnits;
      const unit = query.cooling_unit_id !== undefined ? Number(query.cooling_unit_id) : undefined;
      const location = query.location_id !== undefined ? Number(query.location_id) : undefined;
      const left = readable.filter(
        (id) => (unit === undefined || id === unit) && (location === undefined || world.unitLocation.get(id) === location),
      );
      const filtered = unit !== undefined || location !== undefined;
      statuses = filtered && left.length === 0 ? [404] : [200];
      why =
        statuses[0] === 404
          ? `no readable unit matches cooling_unit_id=${unit ?? '-'} location_id=${location ?? '-'}`
          : 'a readable request';
    }
  } else if (isWebhookOperation(operation)) {
    ({ statuses, why } = await webhookOutcome(world, example, success));
  } else if (query.token_id !== undefined) {
    // the audit trail's filter: a token of the company, else 404 like the token routes
    const known = world.targets.includes(query.token_id.toLowerCase());
    statuses = known ? success : [404];
    why = known ? 'a token of the company' : query.token_id === world.otherCompanyTokenId ? "another company's token" : 'no such token';
  } else if (example.path.token_id !== undefined) {
    const id = example.path.token_id;
    if (!world.targets.includes(id)) {
      statuses = [404];
      why = id === world.otherCompanyTokenId ? "another company's token" : 'no such token';
    } else if (operation.statuses.has(409)) {
      const state = await tokenState(world, id);
      const refused =
        !state ||
        state.revoked ||
        state.replaced_by !== null ||
        (state.expires_at !== null && Date.parse(state.expires_at) <= world.ctx.clock.now().getTime());
      statuses = refused ? [409] : success;
      why = refused ? 'the token is revoked, expired or already rotated' : 'an active token of the company';
    } else {
      statuses = success;
      why = 'a token of the company';
    }
  } else {
    statuses = success;
    why = 'a valid request';
  }
  if (violations.length > 0) {
    return {
      // a refused permission or an unreadable unit may be reported before or after the input's problem
      statuses: [400, ...statuses.filter((status) => status >= 400)],
      fields: violations.map((violation) => violation.field),
      ...(requiredScope ? { requiredScope } : {}),
      why: violations.map((violation) => violation.rule).join('; '),
      violations,
    };
  }
  return { statuses, ...(requiredScope ? { requiredScope } : {}), why, violations };
}

/** The expectation an invalid example carries from its generator. */
export function expectInvalid(example: Example): Expectation {
  const expected = example.expected!;
  return { statuses: expected.statuses, ...(expected.fields ? { fields: expected.fields } : {}), why: expected.why, violations: [] };
}
