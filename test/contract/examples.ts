// Requests generated from an operation of the document: VALID ones (every parameter and body
// field from its schema, with real fixtures mixed in: ids that exist and ids that do not, real
// calendar days, units of the company) and INVALID ones (a contract-valid request with exactly one
// thing wrong, so the answer must name that one thing).
import { sign } from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import {
  calendarDate,
  codePoints,
  dateTime,
  invalidValues,
  objectBranch,
  recentOf,
  typesOf,
  validValue,
  type Overlay,
} from './arbitraries.js';
import { parseAllowedIp } from '../../src/tokens/allowed-ips.js';
import { contractViolations } from './expectations.js';
import { deliveryPaths, webhookValue } from './webhooks.js';
import type { Operation, Parameter, Schema } from './openapi.js';
import type { World } from './world.js';

export type Group = 'valid' | 'invalid';

export interface Example {
  operation: Operation;
  group: Group;
  /** `valid`, or what is wrong: `query page: below the minimum` */
  kind: string;
  credential: string;
  headers: Record<string, string | string[]>;
  path: Record<string, string>;
  query: Array<[string, string]>;
  body?: { text: string; contentType?: string };
  /** the body as generated, when it is JSON the document describes */
  bodyValue?: unknown;
  /** set by an invalid kind: what the contract answers */
  expected?: { statuses: number[]; fields?: string[]; why: string };
}

const DAY_MS = 86_400_000;
export const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

type Mode = 'document' | 'contract';

const octet = fc.nat({ max: 255 });
const hextet = fc.nat({ max: 0xffff }).map((group) => group.toString(16));
/** An allow-list entry in one of the spellings the service takes: an address, or a network without host bits. */
const allowListEntry = fc.oneof(
  fc.tuple(octet, octet, octet, octet).map((octets) => octets.join('.')),
  fc.tuple(octet, octet).map(([a, b]) => `${a}.${b}.0.0/16`),
  fc.tuple(octet, octet, octet).map(([a, b, c]) => `${a}.${b}.${c}.0/24`),
  fc.tuple(hextet, hextet, hextet).map(([a, b, c]) => `${a}:${b}::${c}`),
  hextet.map((group) => `2001:db8:${group}::/48`),
  fc.tuple(octet, octet).map(([a, b]) => `::ffff:10.${a}.${b}.0/120`),
);
const allowList = fc.uniqueArray(allowListEntry, {
  maxLength: 4,
  selector: (entry) => {
    const parsed = parseAllowedIp(entry);
    return parsed.ok ? parsed.cidr : entry;
  },
});

/** Fixture values for what the schema alone cannot make real. */
function overlayFor(world: World, mode: Mode): Overlay {
  const elsewhere = [...world.company.deletedUnits, ...world.other.liveUnits, ...world.other.deletedUnits];
  const day = (offset: number) => new Date(Date.parse(`${addDays(world.today, offset)}T00:00:00Z`));
  const now = world.ctx.clock.now();
  // the targets grow (top-ups, rotations)
  const target = recentOf(world.targets);
  // the audit trail's window: instants in order by construction, and (document mode) now and then any two
  const instantFrom =
    mode === 'contract' ? dateTime(day(-200), day(-100)) : fc.oneof({ arbitrary: dateTime(day(-200), day(-100)), weight: 5 }, dateTime());
  const instantTo =
    mode === 'contract' ? dateTime(day(-99), day(1)) : fc.oneof({ arbitrary: dateTime(day(-99), day(1)), weight: 5 }, dateTime());
  return (path, schema) => {
    switch (path) {
      // the audit trail's filter names a token like the token routes' path does
      case 'path:token_id':
      case 'query:token_id':
        return mode === 'contract' ? target : fc.oneof({ arbitrary: target, weight: 4 }, fc.constant(world.otherCompanyTokenId), fc.uuid());
      // a token's usage window: days, in order and within its longest window (90 days) by
      // construction, and (document mode) now and then any two days
      case 'query:from':
      case 'query:to':
        if (schema.format === 'date') {
          const [low, high] = path === 'query:from' ? [-80, -45] : [-44, 0];
          return mode === 'contract'
            ? calendarDate(day(low), day(high))
            : fc.oneof({ arbitrary: calendarDate(day(low), day(high)), weight: 5 }, calendarDate(day(-1200), day(30)));
        }
        return path === 'query:from' ? instantFrom : instantTo;
      case 'query:cooling_unit_id':
        return mode === 'contract'
          ? fc.constantFrom(...world.company.liveUnits)
          : fc.oneof({ arbitrary: fc.constantFrom(...world.company.liveUnits), weight: 4 }, fc.constantFrom(...elsewhere));
      case 'query:location_id':
        return mode === 'contract'
          ? fc.constantFrom(...world.company.locations)
          : fc.oneof({ arbitrary: fc.constantFrom(...world.company.locations), weight: 4 }, fc.constantFrom(...world.other.locations));
      // windows that are in order and short by construction, and (document mode) now and then any two days
      case 'query:start_date':
        return mode === 'contract'
          ? calendarDate(day(-200), day(-100))
          : fc.oneof({ arbitrary: calendarDate(day(-200), day(-100)), weight: 5 }, calendarDate(day(-1200), day(30)));
      case 'query:end_date':
        return mode === 'contract'
          ? calendarDate(day(-99), day(0))
          : fc.oneof({ arbitrary: calendarDate(day(-99), day(30)), weight: 5 }, calendarDate(day(-1200), day(30)));
      // the values its description lists (the schema says only: a string)
      case 'query:specification_type':
        return fc.constantFrom('TEMPERATURE', 'HUMIDITY', 'TEMPERATURE,HUMIDITY', 'HUMIDITY,TEMPERATURE');
      case 'cooling_unit_ids':
        return fc.subarray(world.company.liveUnits);
      case 'scopes':
        return fc.shuffledSubarray(world.scopes, { minLength: 1 });
      // addresses and networks the service takes (distinct once normalised); the document says "strings"
      case 'allowed_ips':
        return mode === 'contract'
          ? allowList
          : fc.oneof({ arbitrary: allowList, weight: 4 }, fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }));
      case 'expires_at':
        return fc.oneof(fc.constant(null), dateTime(new Date(now.getTime() + 60_000), new Date('9999-12-30T00:00:00Z')));
      default:
        return webhookValue(world, mode, path);
    }
  };
}

export interface CredentialChoice {
  name: string;
  headers: Record<string, string | string[]>;
}

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

/** Valid credentials for the operation's audience: the full ones, and ones that may lack a permission. */
function credentials(world: World, operation: Operation, mode: Mode): fc.Arbitrary<CredentialChoice> {
  switch (operation.audience) {
    case 'employee': {
      const employee = { name: 'employee JWT', headers: bearer(world.jwt.employee) };
      return mode === 'contract'
        ? fc.constant(employee)
        : fc.oneof(
            { arbitrary: fc.constant(employee), weight: 4 },
            fc.constant({ name: 'non-employee JWT', headers: bearer(world.jwt.nonEmployee) }),
          );
    }
    case 'partner': {
      const all = { name: 'token: all scopes', headers: bearer(world.tokens.all.token) };
      if (mode === 'contract') return fc.constant(all);
      return fc.oneof(
        { arbitrary: fc.constant(all), weight: 3 },
        fc.constant({ name: 'token: all scopes, one unit', headers: bearer(world.tokens.restricted.token) }),
        fc.constantFrom(
          ...[...world.tokens.byScope].map(([scope, token]) => ({ name: `token: ${scope} only`, headers: bearer(token.token) })),
        ),
      );
    }
    case 'leak-reporter':
      // the signature covers the body as sent: send() adds it
      return fc.constant({ name: 'signed report', headers: {} });
    default:
      return fc.constant({ name: 'none', headers: {} });
  }
}

const serialize = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** A request the document calls valid (`document`), or one the contract's prose calls valid too (`contract`). */
export function validRequest(world: World, operation: Operation, mode: Mode = 'document'): fc.Arbitrary<Example> {
  const overlay = overlayFor(world, mode);
  const exclusive = mode === 'contract';
  const parameter = (p: Parameter) => {
    const value = validValue(world.book, p.schema, `${p.in}:${p.name}`, overlay, exclusive)
      .map(serialize)
      // a path segment cannot be empty or a dot segment (RFC 3986 removes those): no URL names them
      .filter((text) => p.in !== 'path' || (text !== '' && text !== '.' && text !== '..'));
    return p.required || p.in === 'path' ? value : fc.option(value, { nil: undefined, freq: 2 });
  };
  const pathParameters = operation.parameters.filter((p) => p.in === 'path');
  const queryParameters = operation.parameters.filter((p) => p.in === 'query');
  for (const p of operation.parameters) {
    // If-None-Match, the one header parameter, is never sent here: a 304 needs an ETag of an earlier
    // answer (test/data-surface/conditional-requests.test.ts drives it)
    if (p.in === 'header' && p.name === 'If-None-Match' && !p.required) continue;
    if (p.in !== 'path' && p.in !== 'query') throw new Error(`${operation.id}: parameters in ${p.in} are not supported by the tester`);
  }
  const independent = fc.record(Object.fromEntries(pathParameters.map((p) => [p.name, parameter(p) as fc.Arbitrary<string>])));
  // a delivery's id means something only with its endpoint's: mostly the two together
  const path = pathParameters.some((p) => p.name === 'delivery_id')
    ? fc.oneof({ arbitrary: deliveryPaths(world), weight: 3 }, independent)
    : independent;
  const body = operation.body
    ? fc.record({
        value: validValue(world.book, operation.body, '', overlay, exclusive),
        contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8'),
      })
    : fc.constant(null);
  return fc
    .record({
      credential: credentials(world, operation, mode),
      path,
      query: fc.tuple(...queryParameters.map((p) => parameter(p).map((value) => [p.name, value] as const))),
      body: operation.bodyRequired || !operation.body ? body : fc.option(body, { nil: null, freq: 4 }),
    })
    .map(({ credential, path, query, body }) => {
      const example: Example = {
        operation,
        group: 'valid',
        kind: 'valid',
        credential: credential.name,
        headers: { ...credential.headers },
        path: path as Record<string, string>,
        query: query.filter((pair): pair is readonly [string, string] => pair[1] !== undefined).map(([name, value]) => [name, value]),
      };
      if (body) {
        example.body = { text: JSON.stringify(body.value), contentType: body.contentType };
        example.bodyValue = body.value;
      }
      return example;
    });
}

type Mutation = (base: Example) => Example;

/** The text, spoiled further if it still parses (`null` has no quotes to spoil). */
function malformed(text: string): string {
  try {
    JSON.parse(text);
    return `${text}}`;
  } catch {
    return text;
  }
}

const invalid =
  (kind: string, statuses: number[], fields: string[] | undefined, why: string, change: (example: Example) => void): Mutation =>
  (base) => {
    const example: Example = {
      ...base,
      group: 'invalid',
      kind,
      headers: { ...base.headers },
      path: { ...base.path },
      query: [...base.query],
      expected: { statuses, ...(fields ? { fields } : {}), why },
    };
    if (base.body) example.body = { ...base.body };
    change(example);
    return example;
  };

const withQuery = (example: Example, name: string, ...values: string[]) => {
  example.query = [...example.query.filter(([key]) => key !== name), ...values.map((value) => [name, value] as [string, string])];
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const parameterName = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,14}$/),
  fc.constantFrom('token', 'access_token', 'api_token', 'Page', 'page_size ', 'filter[state]', 'ÿ'),
);
const bodyKey = fc.oneof(fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,14}$/), fc.constantFrom('Name', 'scope', 'id', 'company_id', 'token', ''));

/** Exactly one thing wrong with a contract-valid request, and what the contract answers. */
export function invalidRequest(world: World, operation: Operation): fc.Arbitrary<Example> {
  const { book } = world;
  const mutations: Array<fc.Arbitrary<Mutation>> = [];
  const documented = new Set(operation.parameters.filter((p) => p.in === 'query').map((p) => p.name));

  for (const p of operation.parameters) {
    if (p.in === 'query') {
      for (const bad of invalidValues(book, p.schema, { text: true })) {
        mutations.push(
          bad.map(({ value, why }) =>
            invalid(`query ${p.name}: ${why}`, [400], [p.name], `${p.name}=${JSON.stringify(value)}`, (example) =>
              withQuery(example, p.name, value as string),
            ),
          ),
        );
      }
      mutations.push(
        fc
          .tuple(
            validValue(book, p.schema, `query:${p.name}`, overlayFor(world, 'contract'), true),
            validValue(book, p.schema, `query:${p.name}`, overlayFor(world, 'contract'), true),
          )
          .map(([first, second]) =>
            invalid(`query ${p.name}: given twice`, [400], [p.name], 'a parameter given twice', (example) =>
              withQuery(example, p.name, serialize(first), serialize(second)),
            ),
          ),
      );
    }
    // the contract: an id that is not a UUID is a 404 like an unknown one (nothing tells them apart)
    if (p.in === 'path' && /uuid/i.test(p.description ?? '')) {
      const notUuid = fc
        .oneof(
          fc.string({ minLength: 1, maxLength: 40 }),
          fc.constantFrom('1', 'null', '00000000-0000-0000-0000-00000000000g', `${world.targets[0]}0`, `{${world.targets[0]}}`, '%'),
        )
        .filter((text) => !UUID.test(text) && text !== '.' && text !== '..' && text.trim() !== '' && !text.includes('/'));
      mutations.push(
        notUuid.map((value) =>
          invalid(`path ${p.name}: not a UUID`, [404], undefined, `${p.name}=${JSON.stringify(value)}`, (example) => {
            example.path[p.name] = value;
          }),
        ),
      );
    }
  }
  mutations.push(
    fc
      .tuple(
        parameterName.filter((name) => !documented.has(name)),
        fc.string({ maxLength: 12 }),
      )
      .map(([name, value]) =>
        invalid('query: an unknown parameter', [400], [name], `unknown ${name}=${JSON.stringify(value)}`, (example) => {
          example.query.push([name, value]);
        }),
      ),
  );

  if (operation.body) {
    // a body that is a list of objects (a leak report): the object mutations work on one entry, sent
    // as the list's only one, and the service names the entry at fault by its index (details.field "0")
    const list = book.deref(operation.body).type === 'array' ? (book.deref(operation.body).items as Schema) : null;
    const fieldsOf = (name: string) => (list ? ['0'] : [name]);
    const object = objectBranch(book, list ?? operation.body);
    const properties = (object?.properties as Record<string, Schema> | undefined) ?? {};
    const required = (object?.required as string[] | undefined) ?? [];
    // a whole object with every property, for mutations that need keys to work on
    const full = object
      ? (
          validValue(book, { ...object, required: Object.keys(properties) }, '', overlayFor(world, 'contract'), true) as fc.Arbitrary<
            Record<string, unknown>
          >
        ).filter(
          (value) =>
            contractViolations(world, {
              operation,
              group: 'valid',
              kind: 'valid',
              credential: '',
              headers: {},
              path: {},
              query: [],
              bodyValue: list ? [value] : value,
            }).length === 0,
        )
      : null;
    const setBody = (example: Example, text: string, value?: unknown) => {
      example.body = { text, contentType: example.body?.contentType ?? 'application/json' };
      if (value === undefined) delete example.bodyValue;
      else example.bodyValue = value;
    };
    /** An object body, or a list's one entry: the list around it */
    const setEntry = (example: Example, text: string, value?: unknown) =>
      list ? setBody(example, `[${text}]`, value === undefined ? undefined : [value]) : setBody(example, text, value);
    const baseObject = (example: Example) => {
      const value = list && Array.isArray(example.bodyValue) ? example.bodyValue[0] : example.bodyValue;
      return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    };

    mutations.push(
      fc
        .constantFrom<[string, (text: string) => string]>(
          ['cut short', (text) => text.slice(0, Math.max(1, text.length - 1))],
          ['a trailing comma', (text) => (text.endsWith('}') ? `${text.slice(0, -1)}${text.length > 2 ? ',' : '"a":1,'}}` : `${text},`)],
          ['single quotes', (text) => text.replace(/"/g, "'")],
          ['a bare word', () => '{name: x}'],
          ['two documents', (text) => `${text}${text}`],
        )
        .map(([how, spoil]) =>
          invalid(`body: malformed JSON (${how})`, [400], ['body'], how, (example) =>
            setBody(example, malformed(spoil(example.body?.text ?? '{}'))),
          ),
        ),
    );
    if (full && Object.keys(properties).length > 0) {
      mutations.push(
        full
          .filter((value) => Object.keys(value).length > 0)
          .chain((value) => fc.constantFrom(...Object.keys(value)).map((key) => [value, key] as const))
          .map(([value, key]) =>
            invalid('body: a key given twice', [400], list ? ['0', key] : [key], `"${key}" twice`, (example) => {
              const entries = Object.entries(value).map(([name, item]) => `${JSON.stringify(name)}:${JSON.stringify(item)}`);
              setEntry(example, `{${entries.join(',')},${JSON.stringify(key)}:${JSON.stringify(value[key])}}`);
            }),
          ),
      );
      for (const name of required) {
        mutations.push(
          full.map((value) =>
            invalid(`body: missing required ${name}`, [400], fieldsOf(name), `no ${name}`, (example) => {
              const rest = Object.fromEntries(Object.entries(value).filter(([key]) => key !== name));
              setEntry(example, JSON.stringify(rest), rest);
            }),
          ),
        );
      }
      for (const [name, schema] of Object.entries(properties)) {
        for (const bad of invalidValues(book, schema)) {
          mutations.push(
            fc.tuple(full, bad).map(([value, { value: wrong, why }]) =>
              invalid(`body ${name}: ${why}`, [400], fieldsOf(name), `${name}=${JSON.stringify(wrong)?.slice(0, 60)}`, (example) => {
                const next = { ...value, [name]: wrong };
                setEntry(example, JSON.stringify(next), next);
              }),
            ),
          );
        }
        // the contract: text that is not valid Unicode (a lone surrogate) is 400, wherever it is
        if (typesOf(book, schema).has('string')) {
          mutations.push(
            full.map((value) =>
              invalid(`body ${name}: a lone surrogate`, [400], fieldsOf(name), 'a \\ud800 escape', (example) => {
                setEntry(
                  example,
                  JSON.stringify({ ...value, [name]: 'a' }).replace(`${JSON.stringify(name)}:"a"`, `${JSON.stringify(name)}:"a\\ud800"`),
                );
              }),
            ),
          );
        }
      }
    }
    mutations.push(
      fc
        .tuple(
          bodyKey.filter((key) => !(key in properties)),
          fc.jsonValue({ maxDepth: 1 }),
        )
        .map(([key, value]) =>
          invalid('body: an unknown field', [400], fieldsOf(key), `unknown "${key}"`, (example) => {
            const next = { ...baseObject(example), [key]: value };
            setEntry(example, JSON.stringify(next), next);
          }),
        ),
    );
    const notAnObject = fc
      .constantFrom<unknown>([], 'text', 42, true, null, list ? {} : [{}])
      .filter((value) => !book.valid(operation.body!, value));
    mutations.push(
      notAnObject.map((value) =>
        invalid(`body: not ${list ? 'a list' : 'an object'}`, [400], ['body'], JSON.stringify(value), (example) =>
          setBody(example, JSON.stringify(value), value),
        ),
      ),
    );
    mutations.push(
      fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x').map((type) =>
        invalid('body: not application/json', [415], undefined, type, (example) => {
          example.body = { text: example.body?.text ?? '{}', contentType: type };
        }),
      ),
    );
    if (operation.bodyRequired) {
      mutations.push(
        fc.constant(
          invalid('body: missing (documented as required)', [400], ['body'], 'an empty body', (example) => {
            example.body = { text: '', contentType: 'application/json' };
            delete example.bodyValue;
          }),
        ),
      );
    }
  } else if (operation.method === 'POST') {
    // nothing documented: a body is not part of the request (and any body must be JSON)
    mutations.push(
      fc
        .tuple(
          bodyKey.filter((key) => key !== ''),
          fc.jsonValue({ maxDepth: 1 }),
        )
        .map(([key, value]) =>
          invalid('body: not documented, a JSON object sent', [400], ['body', key], `{"${key}": ...}`, (example) => {
            example.body = { text: JSON.stringify({ [key]: value }), contentType: 'application/json' };
          }),
        ),
      fc.constantFrom('text/plain', 'application/x-www-form-urlencoded').map((type) =>
        invalid('body: not documented, a non-JSON body sent', [415], undefined, type, (example) => {
          example.body = { text: 'x=1', contentType: type };
        }),
      ),
    );
  }

  if (operation.audience === 'employee' || operation.audience === 'partner') {
    const partner = operation.audience === 'partner';
    mutations.push(
      fc.constant(
        invalid('credentials: none', [401], undefined, 'no Authorization header', (example) => {
          delete example.headers.authorization;
          example.credential = 'none';
        }),
      ),
      fc
        .constantFrom(
          'Bearer ',
          'Bearer not-a-credential',
          `Basic ${Buffer.from('user:pass').toString('base64')}`,
          partner ? `Bearer ctk_${'A'.repeat(49)}` : 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.AAAA',
          partner
            ? `Bearer ${world.tokens.all.token.slice(0, -1)}${world.tokens.all.token.endsWith('A') ? 'B' : 'A'}`
            : `Bearer ${world.jwt.employee.slice(0, -2)}xx`,
        )
        .map((header) =>
          invalid('credentials: malformed or unknown', [401], undefined, header.slice(0, 30), (example) => {
            example.headers.authorization = header;
            example.credential = `malformed: ${header.slice(0, 24)}`;
          }),
        ),
      fc.constant(
        invalid(
          'credentials: the other scheme',
          [401],
          undefined,
          partner ? 'an employee JWT on a data endpoint' : 'an API token on a management endpoint',
          (example) => {
            example.headers.authorization = `Bearer ${partner ? world.jwt.employee : world.tokens.all.token}`;
            example.credential = partner ? 'employee JWT' : 'token: all scopes';
          },
        ),
      ),
      fc.constant(
        invalid(
          partner ? 'credentials: a revoked token' : 'credentials: an expired JWT',
          [401],
          undefined,
          'no longer valid',
          (example) => {
            example.headers.authorization = `Bearer ${partner ? world.tokens.revoked.token : world.jwt.expired}`;
            example.credential = partner ? 'revoked token' : 'expired JWT';
          },
        ),
      ),
      fc.constant(
        invalid('credentials: two Authorization headers', [400], ['authorization'], 'the header twice', (example) => {
          example.headers.authorization = [String(example.headers.authorization), String(example.headers.authorization)];
          example.credential = `${example.credential}, twice`;
        }),
      ),
    );
  }

  if (operation.audience === 'leak-reporter') {
    mutations.push(
      fc.constant(
        invalid('credentials: an unsigned report', [401], undefined, 'no signature headers', (example) => {
          example.credential = 'none';
        }),
      ),
      fc.constant(
        invalid('credentials: signed by an unknown key', [401], undefined, 'an unknown key identifier', (example) => {
          example.credential = 'unknown key';
        }),
      ),
    );
  }

  // the one thing wrong is the mutation: the request it starts from breaks no rule of the contract
  const base = validRequest(world, operation, 'contract').filter((example) => contractViolations(world, example).length === 0);
  return fc.tuple(base, fc.oneof(...mutations)).map(([example, mutate]) => mutate(example));
}

/** The URL of an example: path parameters encoded, query pairs in order. */
export function urlOf(example: Example): string {
  const path = example.operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(example.path[name] ?? ''));
  const query = new URLSearchParams(example.query).toString();
  return query ? `${path}?${query}` : path;
}

export const REMOTE_ADDRESS = '192.0.2.10';

export async function send(world: World, example: Example, remoteAddress = REMOTE_ADDRESS): Promise<LightMyRequestResponse> {
  const headers: Record<string, string | string[]> = { ...example.headers };
  if (example.body?.contentType) headers['content-type'] = example.body.contentType;
  if (example.operation.audience === 'leak-reporter' && example.credential !== 'none') {
    // GitHub's signature over the raw body bytes, by the world's key (or, as a mutation, named as another)
    const { keyIdentifier, privateKey } = world.leakReportKey;
    headers['github-public-key-identifier'] = example.credential === 'unknown key' ? `${keyIdentifier}-unknown` : keyIdentifier;
    headers['github-public-key-signature'] = sign('sha256', Buffer.from(example.body?.text ?? ''), {
      key: privateKey,
      dsaEncoding: 'der',
    }).toString('base64');
  }
  return world.ctx.app.inject({
    method: example.operation.method,
    url: urlOf(example),
    headers,
    remoteAddress,
    ...(example.body ? { payload: example.body.text } : {}),
  });
}

/** One line naming the request, for diagnostics. */
export function describe(example: Example): string {
  const body = example.body
    ? ` body(${example.body.contentType ?? 'no type'})=${example.body.text.length > 160 ? `${example.body.text.slice(0, 160)}...` : example.body.text}`
    : '';
  return `${example.operation.method} ${urlOf(example)} [${example.credential}]${body}`;
}

export { codePoints };
