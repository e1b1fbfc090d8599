// fast-check arbitraries from the JSON Schemas of the OpenAPI document: values the schema accepts
// (valid) and, per keyword, values it refuses (invalid, each labelled with what is wrong). Exactly
// the subset the document uses on its request side is supported; any other keyword stops the
// tester with its name, so a document that grows a keyword grows the tester rather than being
// half-read. Every generated value is checked against its schema with ajv (the same validator the
// responses go through): a generator that drifts from the document fails loudly, never silently.
import fc from 'fast-check';
import type { Schema, SchemaBook } from './openapi.js';

/** Keywords that constrain a request value, and the ones that only annotate it. */
const CONSTRAINTS = new Set([
  '$ref',
  'anyOf',
  'type',
  'enum',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
]);
const ANNOTATIONS = new Set(['description', 'default', 'title', 'examples', 'deprecated', 'readOnly', 'writeOnly']);
const FORMATS = new Set(['date', 'date-time', 'uuid']);

export class UnsupportedSchema extends Error {}

function checkKeywords(schema: Schema, where: string) {
  for (const keyword of Object.keys(schema)) {
    // an OpenAPI specification extension (x-max-window-days) says something to tools, not to a validator
    if (keyword.startsWith('x-')) continue;
    if (!CONSTRAINTS.has(keyword) && !ANNOTATIONS.has(keyword))
      throw new UnsupportedSchema(`${where}: unsupported JSON Schema keyword "${keyword}"`);
  }
  if (typeof schema.format === 'string' && !FORMATS.has(schema.format))
    throw new UnsupportedSchema(`${where}: unsupported format "${schema.format}"`);
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');
/** 0001-01-01 .. 9999-12-31 */
const MIN_DATE = new Date('0001-01-01T00:00:00Z');
const MAX_DATE = new Date('9999-12-31T23:59:59.999Z');

/** `YYYY-MM-DD` of a real calendar day. */
export const calendarDate = (min = MIN_DATE, max = MAX_DATE) =>
  fc.date({ min, max, noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));

/** RFC 3339 date-times, in the zone and precision variants a client may use. */
export const dateTime = (min = MIN_DATE, max = MAX_DATE) =>
  fc
    .record({
      instant: fc.date({ min, max, noInvalidDate: true }),
      offsetMinutes: fc.oneof(fc.constant(0), fc.integer({ min: -14 * 60, max: 14 * 60 })),
      zulu: fc.boolean(),
      fraction: fc.constantFrom('', '.000', '.5', '.123456'),
    })
    .map(({ instant, offsetMinutes, zulu, fraction }) => {
      const offset = zulu ? 0 : offsetMinutes;
      const local = new Date(instant.getTime() + offset * 60_000);
      const year = local.getUTCFullYear();
      const zone = zulu ? 'Z' : `${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60), 2)}:${pad(Math.abs(offset) % 60, 2)}`;
      return `${pad(year, 4)}-${pad(local.getUTCMonth() + 1, 2)}-${pad(local.getUTCDate(), 2)}T${pad(local.getUTCHours(), 2)}:${pad(local.getUTCMinutes(), 2)}:${pad(local.getUTCSeconds(), 2)}${fraction}${zone}`;
    })
    // a local time of year 0 or 10000 is not a 4-digit date-time
    .filter((text) => /^\d{4}-/.test(text));

/** An item of a list that grows, read when drawn: mostly one of the 8 latest (likelier still live), now and then any. */
export const recentOf = <T>(list: readonly T[]) =>
  fc.oneof(
    { arbitrary: fc.nat({ max: 7 }).map((back) => list[Math.max(0, list.length - 1 - back)]!), weight: 3 },
    fc.nat().map((index) => list[index % list.length]!),
  );

/**
 * fast-check's `unit: 'binary'` (any code point but a lone surrogate), drawing the same values
 * from the same seeds: the same index over the same two ranges. fast-check's own reads a value
 * back through a map of all 1.1 million code points, which it builds on first use (the strings'
 * "dangerous" slices are read back as the arbitrary is made); this one computes the index.
 */
const SURROGATES = 0xe000 - 0xd800;
const anyCodePoint = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  (value) => {
    if (typeof value !== 'string') throw new Error('not a string');
    const [first, ...rest] = value;
    const point = first?.codePointAt(0);
    if (point === undefined || rest.length > 0 || (point >= 0xd800 && point < 0xe000)) throw new Error('not one code point');
    return point < 0xd800 ? point : point - SURROGATES;
  },
);

/** Any text, from the plain to the exotic (astral planes, combining marks), never a lone surrogate. */
const anyText = (minLength: number, maxLength: number) =>
  fc.oneof(
    fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 30) }),
    fc.string({ unit: 'grapheme', minLength, maxLength: Math.min(maxLength, minLength + 30) }),
    fc.string({ unit: anyCodePoint, minLength, maxLength: Math.min(maxLength, minLength + 30) }),
  );

/** Length in code points, as JSON Schema counts it. */
export const codePoints = (text: string) => [...text].length;

function integerBounds(schema: Schema) {
  let min = typeof schema.minimum === 'number' ? schema.minimum : Number.MIN_SAFE_INTEGER;
  let max = typeof schema.maximum === 'number' ? schema.maximum : Number.MAX_SAFE_INTEGER;
  if (typeof schema.exclusiveMinimum === 'number') min = Math.max(min, Math.floor(schema.exclusiveMinimum) + 1);
  if (typeof schema.exclusiveMaximum === 'number') max = Math.min(max, Math.ceil(schema.exclusiveMaximum) - 1);
  return { min: Math.ceil(min), max: Math.floor(max) };
}

const integerIn = (min: number, max: number) =>
  min >= -0x80000000 && max <= 0x7fffffff ? fc.integer({ min, max }) : fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number);

/** Types a schema admits (resolving anyOf and type arrays). */
export function typesOf(book: SchemaBook, schema: Schema): Set<string> {
  const resolved = book.deref(schema);
  if (Array.isArray(resolved.anyOf)) return new Set((resolved.anyOf as Schema[]).flatMap((branch) => [...typesOf(book, branch)]));
  if (Array.isArray(resolved.type)) return new Set(resolved.type as string[]);
  if (typeof resolved.type === 'string') return new Set([resolved.type]);
  if (Array.isArray(resolved.enum)) return new Set((resolved.enum as unknown[]).map((value) => (value === null ? 'null' : typeof value)));
  return new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object']);
}

/** The object branch of a schema (itself, or the one object branch of an anyOf), or null. */
export function objectBranch(book: SchemaBook, schema: Schema): Schema | null {
  const resolved = book.deref(schema);
  if (resolved.type === 'object' || resolved.properties) return resolved;
  if (Array.isArray(resolved.anyOf)) {
    for (const branch of resolved.anyOf as Schema[]) {
      const found = objectBranch(book, branch);
      if (found) return found;
    }
  }
  return null;
}

/** Overrides by location (`name`, `scopes`, ...): extra value sources for a property. */
export type Overlay = (path: string, schema: Schema) => fc.Arbitrary<unknown> | null;

/**
 * Values `schema` accepts. `overlay` may add sources for a property path (fixtures: real ids, real
 * calendar days); what it adds must still satisfy the schema, and is checked like the rest.
 */
export function validValue(book: SchemaBook, schema: Schema, path = '', overlay?: Overlay, exclusive = false): fc.Arbitrary<unknown> {
  const resolved = book.deref(schema);
  checkKeywords(resolved, path || '(root)');
  const extra = overlay?.(path, resolved) ?? null;
  // exclusive: the overlay's values only (requests that are valid beyond the schema too)
  const arbitrary =
    extra && exclusive
      ? extra
      : extra
        ? fc.oneof(generate(book, resolved, path, overlay, exclusive), { arbitrary: extra, weight: 3 })
        : generate(book, resolved, path, overlay, exclusive);
  return arbitrary.filter((value) => book.valid(resolved, value));
}

function generate(book: SchemaBook, schema: Schema, path: string, overlay: Overlay | undefined, exclusive: boolean): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.anyOf))
    return fc.oneof(...(schema.anyOf as Schema[]).map((branch) => validValue(book, branch, path, overlay, exclusive)));
  if (Array.isArray(schema.type)) {
    const { type: types, ...rest } = schema;
    return fc.oneof(...(types as string[]).map((type) => generate(book, { ...rest, type }, path, overlay, exclusive)));
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const { min, max } = integerBounds(schema);
      return integerIn(min, max);
    }
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: typeof schema.minimum === 'number' ? schema.minimum : -1e15,
        max: typeof schema.maximum === 'number' ? schema.maximum : 1e15,
      });
    case 'string':
      return validString(schema);
    case 'array': {
      const item = validValue(book, (schema.items as Schema | undefined) ?? {}, `${path}[]`, overlay, exclusive);
      const constraints = {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 8, ((schema.minItems as number | undefined) ?? 0) + 8),
      };
      return schema.uniqueItems === true
        ? fc.uniqueArray(item, { ...constraints, selector: (value) => JSON.stringify(value) })
        : fc.array(item, constraints);
    }
    case 'object':
      return validObject(book, schema, path, overlay, exclusive);
    default:
      throw new UnsupportedSchema(`${path}: a schema without a type (${JSON.stringify(schema).slice(0, 80)})`);
  }
}

function validString(schema: Schema): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = (schema.maxLength as number | undefined) ?? 200;
  const fits = (text: string) => codePoints(text) >= minLength && codePoints(text) <= maxLength;
  const sources: Array<fc.Arbitrary<string>> = [];
  if (schema.format === 'date') sources.push(calendarDate());
  if (schema.format === 'date-time') sources.push(dateTime());
  if (schema.format === 'uuid') sources.push(fc.uuid());
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern, 'u');
    sources.push(fc.stringMatching(pattern));
    // the pattern's own generator stays near ASCII: for a permissive pattern (most text matches),
    // any text that happens to match widens it (a filter that rarely passes would never end)
    const text = anyText(minLength, maxLength);
    const matching = fc.sample(text, { numRuns: 40, seed: 7 }).filter((candidate) => pattern.test(candidate)).length;
    if (!schema.format && matching >= 20) sources.push(text.filter((candidate) => pattern.test(candidate)));
  }
  if (sources.length === 0) sources.push(anyText(minLength, maxLength));
  // boundary values, kept when the schema allows them: the shortest and longest texts, blanks
  const edges = [
    ' '.repeat(Math.max(1, minLength)),
    '\u00a0',
    ' x ',
    'x'.repeat(Math.min(maxLength, 1000)),
    `${'x'.repeat(Math.max(0, Math.min(maxLength, 1000) - 1))} `,
  ];
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null;
  const allowed = edges.filter((text) => fits(text) && (!pattern || pattern.test(text)) && !schema.format);
  if (allowed.length > 0) sources.push(fc.constantFrom(...allowed));
  return fc.oneof(...sources).filter(fits);
}

function validObject(
  book: SchemaBook,
  schema: Schema,
  path: string,
  overlay: Overlay | undefined,
  exclusive: boolean,
): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
  const required = (schema.required as string[] | undefined) ?? [];
  const model = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [
      name,
      validValue(book, property, path ? `${path}.${name}` : name, overlay, exclusive),
    ]),
  );
  const some = fc.record(model, { requiredKeys: required.filter((name) => name in properties) });
  // the empty object, an edge fast-check's record almost never draws when nothing is required
  // (an update that changes nothing)
  const declared =
    required.length === 0 && Object.keys(properties).length > 0 ? fc.oneof({ arbitrary: some, weight: 5 }, fc.constant({})) : some;
  const additional = schema.additionalProperties;
  if (additional === false || additional === undefined) return declared as fc.Arbitrary<Record<string, unknown>>;
  const extraValue =
    additional === true || (typeof additional === 'object' && Object.keys(additional as object).length === 0)
      ? fc.jsonValue()
      : validValue(book, additional as Schema, `${path}.*`, overlay, exclusive);
  const extras = fc.dictionary(
    fc.string({ minLength: 1, maxLength: 10 }).filter((key) => !(key in properties)),
    extraValue,
    { maxKeys: 2 },
  );
  return fc.tuple(declared, extras).map(([own, more]) => ({ ...more, ...own }));
}

/** A value the schema refuses, and what is wrong with it. */
export interface Invalid {
  value: unknown;
  why: string;
}

/**
 * Per keyword of `schema`, values that break it (out of range, wrong type, not in the enum, ...),
 * each kept only when ajv agrees the whole schema refuses it. `text` is for query parameters:
 * the values are the text sent, and an integer is only an integer when it is written as one.
 */
export function invalidValues(book: SchemaBook, schema: Schema, options: { text?: boolean } = {}): Array<fc.Arbitrary<Invalid>> {
  const resolved = book.deref(schema);
  const branches = Array.isArray(resolved.anyOf) ? (resolved.anyOf as Schema[]).map((branch) => book.deref(branch)) : [resolved];
  const kinds: Array<[string, fc.Arbitrary<unknown>]> = [];
  const types = typesOf(book, resolved);
  for (const branch of branches) {
    const branchTypes = Array.isArray(branch.type) ? (branch.type as string[]) : [branch.type as string];
    if (branchTypes.includes('integer') || branchTypes.includes('number')) {
      const { min, max } = integerBounds(branch);
      if (min > Number.MIN_SAFE_INTEGER)
        kinds.push([
          'below the minimum',
          fc.oneof(fc.constant(min - 1), integerIn(Math.max(Number.MIN_SAFE_INTEGER, min - 1_000_000), min - 1)),
        ]);
      if (max < Number.MAX_SAFE_INTEGER)
        kinds.push([
          'above the maximum',
          fc.oneof(fc.constant(max + 1), integerIn(max + 1, Math.min(Number.MAX_SAFE_INTEGER, max * 2 + 1_000_000))),
        ]);
      if (branchTypes.includes('integer')) kinds.push(['not a whole number', fc.constantFrom(1.5, min + 0.25, 1e-7)]);
    }
    if (branchTypes.includes('string')) {
      if (Array.isArray(branch.enum)) {
        const allowed = branch.enum as unknown[];
        kinds.push([
          'not one of the enum',
          fc.oneof(
            anyText(0, 12),
            fc.constantFrom(...allowed.map((value) => String(value).toUpperCase()), ...allowed.map((value) => ` ${String(value)}`)),
          ),
        ]);
      }
      // besides any text: characters a pattern commonly excludes, inside and at either end
      if (typeof branch.pattern === 'string')
        kinds.push([
          'does not match the pattern',
          fc.oneof(anyText(0, 30), fc.constantFrom('2026-1-01', '2026-01-01T00:00:00Z', 'x\u0007y', '\u0000', 'x\n', '\tx', 'x\u007f')),
        ]);
      if (typeof branch.minLength === 'number' && branch.minLength > 0)
        kinds.push(['shorter than minLength', fc.string({ maxLength: branch.minLength - 1 })]);
      if (typeof branch.maxLength === 'number') {
        const over = branch.maxLength + 1;
        kinds.push([
          'longer than maxLength',
          fc.oneof(
            fc.string({ minLength: over, maxLength: over + 20, unit: fc.constantFrom('a', 'é', 'Z') }),
            fc.constantFrom(`a${' '.repeat(over)}`, `${' '.repeat(over)}a`),
          ),
        ]);
      }
      if (branch.format === 'date-time' || branch.format === 'date')
        kinds.push([
          `not a ${branch.format}`,
          fc.constantFrom(
            '2027-13-01T00:00:00Z',
            '2027-02-30T00:00:00Z',
            '2027-06-30',
            '2027-06-30T00:00:00',
            'tomorrow',
            '2027-06-30T25:00:00Z',
            '2027-06-30 00:00:00Z',
          ),
        ]);
    }
    if (branchTypes.includes('array')) {
      const item = book.deref((branch.items as Schema | undefined) ?? {});
      const validItem = validValue(book, item);
      if (typeof branch.minItems === 'number' && branch.minItems > 0)
        kinds.push(['fewer items than minItems', fc.array(validItem, { maxLength: branch.minItems - 1 })]);
      if (typeof branch.maxItems === 'number') {
        const over = branch.maxItems + 1;
        kinds.push([
          'more items than maxItems',
          fc.constant(
            item.type === 'integer' ? Array.from({ length: over }, (_, index) => index + 1) : Array.from({ length: over }, () => null),
          ),
        ]);
      }
      if (branch.uniqueItems === true)
        kinds.push([
          'a repeated item (uniqueItems)',
          fc.array(validItem, { minLength: 1, maxLength: 3 }).map((items) => [...items, items[0]]),
        ]);
      for (const wrong of invalidValues(book, item))
        kinds.push([
          'an invalid item',
          fc.tuple(fc.array(validItem, { maxLength: 2 }), wrong).map(([items, bad]) => [...items, bad.value]),
        ]);
    }
  }
  // the wrong JSON type altogether (in a query string everything is text: a word for a number)
  if (options.text) {
    if (types.has('integer') || types.has('number'))
      kinds.push(['not a number', fc.constantFrom('abc', '', '1.5', '1e3', '0x10', '+1', '１')]);
  } else {
    const others = (
      [
        ['string', 'text'],
        ['integer', 7],
        ['number', 1.5],
        ['boolean', true],
        ['null', null],
        ['array', []],
        ['object', {}],
      ] as const
    ).filter(([type]) => !types.has(type) && !(type === 'integer' && types.has('number')));
    if (others.length > 0) kinds.push(['of the wrong type', fc.constantFrom(...others.map(([, value]) => value))]);
  }
  const accepts = (value: unknown) => book.valid(resolved, options.text ? fromQueryText(resolved, book, value) : value);
  return kinds.flatMap(([why, arbitrary]) => {
    const mapped = (options.text ? arbitrary.map((value) => (typeof value === 'string' ? value : String(value))) : arbitrary).filter(
      (value) => !accepts(value),
    );
    // a kind that never yields a refused value (the schema allows it through another branch) is dropped
    try {
      fc.sample(mapped, { numRuns: 3, seed: 1 });
    } catch {
      return [];
    }
    return [mapped.map((value) => ({ value, why }))];
  });
}

/** A query parameter's text as the typed value its schema describes (form style, one value). */
export function fromQueryText(schema: Schema, book: SchemaBook, text: unknown): unknown {
  if (typeof text !== 'string') return text;
  const types = typesOf(book, schema);
  if ((types.has('integer') || types.has('number')) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}
