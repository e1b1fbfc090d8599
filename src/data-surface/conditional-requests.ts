// Conditional requests on the data surface (docs/contract.md, "Conditional requests"): every 200 of a
// data endpoint names its answer with an ETag, and a request whose If-None-Match names the current
// one is 304, with no body, and is not counted against the token's rate limit. It is still
// authenticated, scope- and unit-checked (token-auth's hooks run first), and counted in the token's
// usage as a 304 (usage-counting.ts).
//
// A route opts in with config.conditional, naming its kind of validator:
// - A version, read before the page by the route (a function: sensor history and the change
//   feed), of everything the answer depends on: a 304 is answered before the handler, which reads
//   no page. Keyed with the database's cursor key (HMAC), so a tag can be neither forged nor read
//   back into the feed positions it covers, and it names the company and the units read.
// - 'answer': the answer's own bytes, hashed after the handler and before compression (analytics,
//   whose tables the wider platform writes with no version; and sensor history when no version can
//   vouch for its page): a strong tag, and a 304 saves the transfer and the compression, not the queries.
//
// Counting: a request with If-None-Match is not counted as it arrives: its token's window is only
// read (RateLimiter.peek). With the window spent, it is counted and refused 429 at once, like any
// other request. Otherwise it is counted once it is known not to be a 304: before the handler when a
// version did not match, with the answer otherwise (or its refusal: a 400, 403 or 404 counts as
// always), and refused 429 then if other requests spent the window meanwhile. A 304 never touches
// the counter, so no count is ever taken back: the limit stays exact across processes.
import { createHmac, hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { AuthenticatedToken } from '../tokens/authenticator.js';
import type { App } from '../types.js';

/** A validator: the opaque tag (base64url) and whether it is weak (the answer is only semantically the same). */
export interface Validator {
  tag: string;
  weak: boolean;
  /** a version's: the change feed's head when it was read (a page read from an older snapshot does not carry it) */
  head?: bigint;
}

/** A data route's version of the answer to this request, read before the handler; null: the answer's bytes decide. */
export type VersionOf = (request: FastifyRequest) => Promise<Validator | null>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers conditional requests (conditional-requests.ts): by a version read before its handler, or by its answer's bytes. */
    conditional?: VersionOf | 'answer';
  }
  interface FastifyRequest {
    /** A conditional request not counted yet against its token's rate limit: counted once it is known not to be a 304. */
    countDeferred: boolean;
    /** The validator of this request's answer, when a version gives it (else the answer's bytes). */
    validator: Validator | null;
  }
}

/** Every answer is the token's own and changes: no shared cache keeps it, a private one asks again each time. */
export const CACHE_CONTROL = 'private, no-cache';

const TAG_CHARACTERS = 27;

/** The ETag header of a validator. */
export const entityTag = (validator: Validator) => `${validator.weak ? 'W/' : ''}"${validator.tag}"`;

/** The opaque tags of an If-None-Match (RFC 9110, 13.1.2: `*` or a list of entity tags); null when absent. */
export function ifNoneMatch(request: FastifyRequest): '*' | string[] | null {
  const header = request.headers['if-none-match'];
  if (header === undefined) return null;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text.trim() === '*') return '*';
  return [...text.matchAll(/(?:W\/)?"([^"]*)"/g)].map((match) => match[1]!);
}

/** Weak comparison (RFC 9110, 8.8.3.2): the opaque tags are equal, W/ or not. `*` matches any current answer. */
export function matches(wanted: '*' | string[] | null, validator: Validator): boolean {
  return wanted === '*' || (wanted !== null && wanted.includes(validator.tag));
}

/** The strong validator of an answer's bytes, before compression; null for a body that is not text or bytes. */
function bodyValidator(payload: unknown): Validator | null {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return null;
  return { tag: hash('sha256', payload, 'base64url').slice(0, TAG_CHARACTERS), weak: false };
}

const versionKeys = new WeakMap<Buffer, Buffer>();

/**
 * A version's tag: an HMAC, under a key derived from the database's cursor key, of everything the
 * answer depends on. The same on every process and replica of the service, and across restarts.
 */
export function versionTag(databaseKey: Buffer, parts: ReadonlyArray<string | number | bigint | null>): string {
  let key = versionKeys.get(databaseKey);
  if (!key) versionKeys.set(databaseKey, (key = createHmac('sha256', databaseKey).update('etag').digest()));
  return createHmac('sha256', key).update(parts.join('\u0000')).digest('base64url').slice(0, TAG_CHARACTERS);
}

// A company-wide token's unit list is the same array from request to request (authorize.ts): its
// text is made once
const unitTexts = new WeakMap<readonly number[], string>();
/** The unit list a version names, as text. */
export function unitsText(unitIds: readonly number[]): string {
  let text = unitTexts.get(unitIds);
  if (text === undefined) unitTexts.set(unitIds, (text = unitIds.join(',')));
  return text;
}

/**
 * The rate-limit count of a conditional request (token-auth's, beside the revocation check): with
 * the window spent it is counted, and refused, now; else it is put off (RateLimiter.peek set the
 * headers to the window as it stands).
 */
export async function countOrDefer(app: App, token: AuthenticatedToken, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (await app.rateLimits.peek('analytics_api_token', token.id, reply)) request.countDeferred = true;
  else await app.rateLimits.check('analytics_api_token', token.id, request, reply);
}

/** Takes the count put off, once the request is known not to be a 304 (a 429 when the window filled meanwhile). */
async function countNow(app: App, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  request.countDeferred = false;
  // a token refused after the peek (revoked, expired) is counted against the client IP only
  if (request.apiToken) await app.rateLimits.check('analytics_api_token', request.apiToken.id, request, reply);
}

/** Whether the request may be answered 304: a GET or HEAD with If-None-Match, of a route that answers conditional requests. */
export const isConditional = (request: FastifyRequest) =>
  request.headers['if-none-match'] !== undefined &&
  request.routeOptions.config.conditional !== undefined &&
  (request.method === 'GET' || request.method === 'HEAD');

function notModified(reply: FastifyReply, validator: Validator) {
  reply.code(304).header('etag', entityTag(validator)).header('cache-control', CACHE_CONTROL).removeHeader('content-type');
}

/** The hooks, for every route of the data surface; after token-auth's (the 304 comes only for a request it let through). */
export function registerConditionalRequests(app: App) {
  app.decorateRequest('countDeferred', false);
  app.decorateRequest('validator', null);

  // A version's 304, before the handler (callback style: no promise for routes without a version)
  app.addHook('preHandler', (request, reply, done) => {
    const version = request.routeOptions.config.conditional;
    if (typeof version !== 'function') return done();
    version(request).then((validator) => {
      request.validator = validator;
      if (!request.countDeferred) return done();
      const wanted = ifNoneMatch(request);
      // `*` matches any answer the handler would give as a 200: it decides
      if (!validator || wanted === '*') return done();
      if (matches(wanted, validator)) {
        notModified(reply, validator);
        reply.send();
        return;
      }
      // not a 304: counted before the page is read, so a spent window costs no page
      countNow(app, request, reply).then(() => done(), done);
    }, done);
  });

  // Every 200 gets its ETag; the answers' bytes decide a 304 where no version did; a count put off is taken
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 304 || request.routeOptions.config.conditional === undefined) return done(null, payload);
    const validator = reply.statusCode === 200 ? (request.validator ?? bodyValidator(payload)) : null;
    if (validator && request.countDeferred && matches(ifNoneMatch(request), validator)) {
      notModified(reply, validator);
      return done(null, null);
    }
    const answer = () => {
      if (validator) reply.header('etag', entityTag(validator)).header('cache-control', CACHE_CONTROL);
      done(null, payload);
    };
    if (!request.countDeferred) return answer();
    countNow(app, request, reply).then(answer, (error: unknown) => {
      if (!(error instanceof ApiError)) return done(error as Error);
      // the window filled while this request was answered: refused like any request over the limit
      reply.code(error.statusCode).headers(error.headers).header('content-type', 'application/json; charset=utf-8');
      done(null, JSON.stringify(error.toBody()));
    });
  });
}
