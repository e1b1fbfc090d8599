// The stateful links of the token resource, driven by fast-check: create (a generated valid body)
// -> retrieve -> list -> use on a data endpoint -> rotate (when the document has it) -> retrieve
// both -> revoke -> revoke again -> retrieve -> rotate the revoked one. Every answer goes through
// the same conformance checks as the generated requests, and the state must read consistently
// from step to step (the same object, the links both ways, the first revoked_at kept).
import { BlockList, isIP } from 'node:net';
import fc from 'fast-check';
import type { Test } from 'tap';
import type { TokenJson } from '../helpers/tokens.js';
import { validValue } from './arbitraries.js';
import { parseBody } from './checks.js';
import { validRequest } from './examples.js';
import { expectValid } from './expectations.js';
import { type ChainCall, linkChain } from './link-chain.js';
import type { Operation } from './openapi.js';
import { scopeOf, type World } from './world.js';

const DEFAULT_GRACE_SECONDS = 86_400;

export async function runLinks(t: Test, world: World, options: { seed: number; numRuns: number }) {
  const find = (method: string, path: string) =>
    world.operations.find((operation) => operation.method === method && operation.path === path);
  const create = find('POST', '/api/v1/api-tokens');
  const list = find('GET', '/api/v1/api-tokens');
  const retrieve = find('GET', '/api/v1/api-tokens/{token_id}');
  const revoke = find('POST', '/api/v1/api-tokens/{token_id}/revoke');
  const rotate = find('POST', '/api/v1/api-tokens/{token_id}/rotate');
  for (const [name, operation] of Object.entries({ create, list, retrieve, revoke }))
    t.ok(operation, `the document has the ${name} operation`);
  if (!create || !list || !retrieve || !revoke) return;
  t.comment(
    rotate
      ? 'the document has POST /api/v1/api-tokens/{token_id}/rotate: rotation is part of the links'
      : 'no rotate operation in the document',
  );
  const data = world.operations.filter((operation) => operation.audience === 'partner');

  const { expect, call: send_, status, same, started, report } = linkChain(world);
  const call = (step: string, operation: Operation, init: Omit<ChainCall, 'path'> & { tokenId?: string }) =>
    send_<TokenJson & { data?: TokenJson[] }>(step, operation, { ...init, path: init.tokenId ? { token_id: init.tokenId } : {} });
  const instant = (text: string | null) => (text === null ? null : Date.parse(text));
  // last_used_at is written behind (within a minute): once a token is used it may move between reads
  const settled = (token: TokenJson | undefined) => (token ? { ...token, last_used_at: '(written behind)' } : token);
  /** What a data request from inject's address (127.0.0.1) gets with a live token of this allow-list. */
  const fromLoopback = (allowedIps: string[]) => {
    if (allowedIps.length === 0) return 200;
    // an IPv4 client is matched against the IPv4 entries only (an IPv6 network admits no IPv4 client)
    const list = new BlockList();
    for (const cidr of allowedIps) {
      const [address, prefix] = cidr.split('/') as [string, string];
      if (isIP(address) === 4) list.addSubnet(address, Number(prefix), 'ipv4');
    }
    return list.check('127.0.0.1', 'ipv4') ? 200 : 403;
  };
  const useOn = async (step: string, rawToken: string, scopes: string[], expected: number) => {
    const operation = data.find((candidate) => scopes.includes(scopeOf(world, candidate)));
    if (!operation) return;
    const { response } = await call(step, operation, { query: [['page_size', '1']], headers: { authorization: `Bearer ${rawToken}` } });
    status(step, response, expected);
  };

  const graceBody = rotate?.body ? validValue(world.book, rotate.body) : fc.constant(null);
  await fc.assert(
    fc.asyncProperty(validRequest(world, create, 'contract'), graceBody, async (creation, grace) => {
      const expectation = await expectValid(world, creation);
      fc.pre(expectation.violations.length === 0);
      started();
      const input = creation.bodyValue as { name: string; scopes: string[]; cooling_unit_ids?: number[]; expires_at?: string | null };

      // create
      const created = await call('create', create, { body: input });
      status('create', created.response, 201);
      if (created.response.statusCode !== 201) return;
      const token = created.body;
      same('create: the name, trimmed', token.name, input.name.trim());
      same('create: the scopes', [...token.scopes].sort(), [...input.scopes].sort());
      same('create: the units', [...token.cooling_unit_ids].sort(), [...(input.cooling_unit_ids ?? [])].sort());
      same('create: the expiry', instant(token.expires_at), instant(input.expires_at ?? null));
      same(
        'create: a live token, not rotated',
        [token.revoked, token.revoked_at, token.rotated_from, token.replaced_by],
        [false, null, null, null],
      );
      expect('create: the raw token', /^ctk_[0-9A-Za-z]+$/.test(token.token ?? ''), () => String(token.token));
      const { token: raw, ...stored } = token;

      // retrieve and list
      const retrieved = await call('retrieve', retrieve, { tokenId: token.id });
      status('retrieve', retrieved.response, 200);
      same('retrieve: the created object, without the raw token', retrieved.body, stored);
      const listed = await call('list', list, {
        query: [
          ['state', 'active'],
          ['page_size', '1000'],
        ],
      });
      status('list', listed.response, 200);
      const entry = listed.body.data?.find((item) => item.id === token.id);
      same('list (state=active): the created object, without the raw token', entry, stored);
      const liveAnswer = fromLoopback(token.allowed_ips);
      await useOn('the new token reads a data endpoint of its scopes (403 from outside its allow-list)', raw!, token.scopes, liveAnswer);

      let live = { id: token.id, raw: raw!, object: stored as TokenJson };
      if (rotate) {
        const body = grace;
        const seconds =
          body && typeof body === 'object' && 'grace_period_seconds' in body
            ? Number((body as { grace_period_seconds: number }).grace_period_seconds)
            : DEFAULT_GRACE_SECONDS;
        const rotated = await call('rotate', rotate, { tokenId: token.id, ...(body !== null ? { body } : {}) });
        status('rotate', rotated.response, 201);
        if (rotated.response.statusCode === 201) {
          const replacement = rotated.body;
          same(
            'rotate: the replacement keeps name, scopes, units, allow-list and expiry',
            [replacement.name, replacement.scopes, replacement.cooling_unit_ids, replacement.allowed_ips, replacement.expires_at],
            [stored.name, stored.scopes, stored.cooling_unit_ids, stored.allowed_ips, stored.expires_at],
          );
          same('rotate: the replacement names the old token', replacement.rotated_from, token.id);
          expect(
            'rotate: a new id and a new raw token',
            replacement.id !== token.id && !!replacement.token && replacement.token !== raw,
            () => JSON.stringify(replacement).slice(0, 200),
          );
          const old = await call('retrieve the rotated token', retrieve, { tokenId: token.id });
          same('retrieve the rotated token: it names its replacement', old.body.replaced_by, replacement.id);
          const now = world.ctx.clock.now().getTime();
          const ends = Math.min(now + seconds * 1000, instant(stored.expires_at) ?? Infinity);
          same('retrieve the rotated token: it expires after the grace period (or its own expiry)', instant(old.body.expires_at), ends);
          await useOn('the rotated token during its grace period (401 when it is 0)', raw!, token.scopes, seconds > 0 ? liveAnswer : 401);
          await useOn('the replacement reads a data endpoint of its scopes', replacement.token!, replacement.scopes, liveAnswer);
          const { token: replacementRaw, ...replacementStored } = replacement;
          live = { id: replacement.id, raw: replacementRaw!, object: replacementStored as TokenJson };
        }
      }

      // revoke, twice: the same object, the first revoked_at kept
      const revoked = await call('revoke', revoke, { tokenId: live.id });
      status('revoke', revoked.response, 200);
      same('revoke: revoked, with revoked_at', [revoked.body.revoked, typeof revoked.body.revoked_at], [true, 'string']);
      same('revoke: nothing else changes', settled({ ...revoked.body, revoked: false, revoked_at: null }), settled(live.object));
      const again = await call('revoke again', revoke, { tokenId: live.id });
      status('revoke again', again.response, 200);
      same('revoke again: the same object (idempotent, the first revoked_at kept)', settled(again.body), settled(revoked.body));
      const after = await call('retrieve the revoked token', retrieve, { tokenId: live.id });
      status('retrieve the revoked token', after.response, 200);
      same('retrieve the revoked token: the revoked object', settled(after.body), settled(revoked.body));
      const revokedList = await call('list revoked', list, {
        query: [
          ['state', 'revoked'],
          ['page_size', '1000'],
        ],
      });
      same(
        'list (state=revoked): holds the revoked object',
        settled(revokedList.body.data?.find((item) => item.id === live.id)),
        settled(revoked.body),
      );
      await useOn('the revoked token is refused', live.raw, live.object.scopes, 401);
      if (rotate) {
        const refused = await call('rotate the revoked token', rotate, { tokenId: live.id });
        status('rotate the revoked token', refused.response, 409);
        const details = (parseBody(refused.response) as { error?: { details?: { reason?: string } } } | undefined)?.error?.details;
        same('rotate the revoked token: details.reason', details?.reason, 'revoked');
      }
    }),
    { seed: options.seed, numRuns: options.numRuns },
  );
  report(t, 'create -> ... -> retrieve');
}
