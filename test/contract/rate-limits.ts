// The 429 answer of every rate-limited operation, with the real limits: each budget of the
// contract's table ("Rate limits") is spent by requests of the operation's own audience until the
// service refuses, and the refusal must conform to the operation's documented 429 (the Error
// schema, code rate_limited, X-Request-Id, X-RateLimit-* with Remaining 0, Retry-After in seconds)
// and name the contract's limit. Requests without credentials spend the client IP's budgets.
// The operations endpoints are outside every limit.
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import { checkAnswer, parseBody } from './checks.js';
import { send, validRequest, type Example } from './examples.js';
import type { Operation } from './openapi.js';
import { createWorld, type World } from './world.js';

/** docs/contract.md, "Rate limits": requests a minute per budget. */
const CONTRACT_LIMITS = {
  data: 100,
  'management reads': 600,
  'management writes': 120,
  'unauthenticated reads': 120,
  'unauthenticated writes': 20,
  'POST /v1/users/validate-cooling-user-id/': 30,
} as const;
type Budget = keyof typeof CONTRACT_LIMITS;

const MAX_REQUESTS = 1000;

function budgetOf(operation: Operation, authenticated: boolean): Budget {
  if (operation.path === '/v1/users/validate-cooling-user-id/') return 'POST /v1/users/validate-cooling-user-id/';
  if (!authenticated) return operation.method === 'GET' ? 'unauthenticated reads' : 'unauthenticated writes';
  if (operation.audience === 'partner') return 'data';
  return operation.method === 'GET' ? 'management reads' : 'management writes';
}

export async function runRateLimits(t: Test) {
  const world: World = await createWorld(t, { realRateLimits: true });
  const limited = world.operations.filter((operation) => operation.statuses.has(429));
  const addresses = new Map<Budget, string>();
  const addressOf = (budget: Budget) => {
    if (!addresses.has(budget)) addresses.set(budget, `198.51.100.${addresses.size + 1}`);
    return addresses.get(budget)!;
  };
  let sent = 0;

  const exhaust = async (
    example: Example,
    address: string,
  ): Promise<{ refusal: LightMyRequestResponse | null; first: LightMyRequestResponse | null }> => {
    let first: LightMyRequestResponse | null = null;
    for (let index = 0; index < MAX_REQUESTS; index++) {
      const response = await send(world, example, address);
      sent++;
      if (response.statusCode === 429) return { refusal: response, first };
      first ??= response;
    }
    return { refusal: null, first };
  };

  const checkRefusal = (t: Test, label: string, operation: Operation, budget: Budget, refusal: LightMyRequestResponse | null) => {
    t.ok(refusal, `${label}: a 429 within ${MAX_REQUESTS} requests`);
    if (!refusal) return;
    const findings = checkAnswer(world.book, operation, refusal);
    t.same(
      findings.map((finding) => `${finding.check}: ${finding.detail}`),
      [],
      `${label}: the 429 conforms to the document`,
    );
    const body = parseBody(refusal) as { error?: { code?: string } } | undefined;
    t.equal(body?.error?.code, 'rate_limited', `${label}: code rate_limited`);
    const retryAfter = Number(refusal.headers['retry-after']);
    t.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
      `${label}: Retry-After ${String(refusal.headers['retry-after'])} s, within the one-minute window`,
    );
    t.equal(refusal.headers['x-ratelimit-remaining'], '0', `${label}: X-RateLimit-Remaining 0`);
    t.equal(
      Number(refusal.headers['x-ratelimit-limit']),
      CONTRACT_LIMITS[budget],
      `${label}: X-RateLimit-Limit is the contract's ${budget} limit`,
    );
  };

  for (const operation of limited) {
    await t.test(operation.id, async (t) => {
      const [example] = fc.sample(validRequest(world, operation, 'contract'), { numRuns: 1, seed: 18 });
      // spent with a request refused for its input (cheap, and counted like any other: contract)
      const probe: Example = { ...example!, query: [...example!.query, ['contract_probe', '1']] };
      if (operation.audience === 'employee' || operation.audience === 'partner') {
        const budget = budgetOf(operation, true);
        const { refusal, first } = await exhaust(probe, addressOf(budget));
        if (first)
          t.equal(
            Number(first.headers['x-ratelimit-limit']),
            CONTRACT_LIMITS[budget],
            `${budget}: the first answer announces the contract's limit`,
          );
        checkRefusal(t, `${budget} spent`, operation, budget, refusal);
        const anonymous = budgetOf(operation, false);
        const { refusal: anonymousRefusal } = await exhaust({ ...probe, headers: {} }, addressOf(anonymous));
        checkRefusal(t, `${anonymous} (no credentials) spent`, operation, anonymous, anonymousRefusal);
      } else {
        const budget = budgetOf(operation, false);
        const { refusal } = await exhaust(probe, addressOf(budget));
        checkRefusal(t, `${budget} spent`, operation, budget, refusal);
      }
    });
  }

  await t.test('the operations endpoints are outside every limit', async (t) => {
    for (const operation of world.operations.filter((candidate) => !candidate.statuses.has(429))) {
      const [example] = fc.sample(validRequest(world, operation, 'contract'), { numRuns: 1, seed: 18 });
      const statuses = new Set<number>();
      for (let index = 0; index < 150; index++) statuses.add((await send(world, example!, '198.51.100.250')).statusCode);
      sent += 150;
      t.notOk(statuses.has(429), `${operation.id}: 150 requests from one address, no 429 (${[...statuses].join(', ')})`);
    }
  });
  t.comment(`${sent} requests with the real limits`);
}
