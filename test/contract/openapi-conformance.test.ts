// Issue 18: the service driven from its own OpenAPI document. For every operation of
// GET /openapi.json, fast-check generates requests from the documented parameters and body
// (valid ones, and invalid ones with exactly one thing wrong), fills ids and credentials from real
// fixtures, sends them through app.inject and checks every answer: never a 5xx, a documented
// status, JSON, the documented schema, the documented headers with their types, the contract's
// error code; valid input accepted, invalid input refused naming the problem. Then the stateful
// links (tokens: create -> retrieve -> rotate -> revoke -> retrieve; webhook endpoints: create -> test
// -> deliveries -> replay -> rotate-secret -> delete) and, with the real rate limits, the
// 429 answer of every operation. Reproducible: a fixed seed (FC_SEED overrides), FC_RUNS examples
// per operation and kind (default 40). Disagreements of src/ with the document are `todo`
// assertions (test/contract/gaps.ts and the violations of expectations.ts), never weaker checks.
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import { ANSWER_CHECKS, checkAnswer, checkOutcome, Ledger, OUTCOME_CHECKS, parseBody, type Check, type Failure } from './checks.js';
import { invalidRequest, send, validRequest, type Example } from './examples.js';
import { expectInvalid, expectValid } from './expectations.js';
import { knownGap } from './gaps.js';
import type { Operation } from './openapi.js';
import { runLinks } from './links.js';
import { runWebhookLinks } from './webhook-links.js';
import { runRateLimits } from './rate-limits.js';
import { noteWebhookAnswer, prepareWebhooks } from './webhooks.js';
import { createWorld, topUpTargets, type World } from './world.js';

const SEED = Number(process.env.FC_SEED ?? 18_2026);
const RUNS = Number(process.env.FC_RUNS ?? 40);
const started = Date.now();

const world = await createWorld(t);
const ledger = new Ledger();

async function exercise(world: World, example: Example): Promise<LightMyRequestResponse> {
  const { operation } = example;
  const expectation = example.group === 'valid' ? await expectValid(world, example) : expectInvalid(example);
  const response = await send(world, example);
  ledger.count(operation, example, response.statusCode);
  const checks: Check[] = [...ANSWER_CHECKS, ...OUTCOME_CHECKS];
  if (example.group === 'valid') checks.push('document-valid input is accepted (not 400)');
  if (expectation.fields) checks.push('details.field names the problem');
  if (expectation.requiredScope) checks.push('details.required_scope names the missing permission');
  ledger.checked(operation, checks);
  for (const finding of [...checkAnswer(world.book, operation, response), ...checkOutcome(example, expectation, response)]) {
    // a refusal of document-valid input under a rule the document does not state: the rule's todo
    const gap = expectation.violations.find((violation) => violation.gap)?.gap;
    const todo = gap && finding.check === 'document-valid input is accepted (not 400)' ? gap : knownGap(example, finding, response);
    ledger.fail(example, response, finding, todo);
  }
  // the state moves on: a rotation's replacement is a token of the company too
  if (response.statusCode === 201 && /\/rotate$/.test(operation.path)) {
    const id = (parseBody(response) as { id?: string } | undefined)?.id;
    if (id) world.targets.push(id);
  }
  noteWebhookAnswer(world, example, response);
  return response;
}

/** One assertion per check the operation ran: failures without a todo fail, known ones are todo. */
function assertChecks(t: Test, operation: Operation) {
  for (const check of ledger.ran.get(operation.id) ?? []) {
    const failures = ledger.failures.filter((failure) => failure.operation === operation.id && failure.check === check);
    const groups = new Map<string | undefined, Failure[]>();
    for (const failure of failures) groups.set(failure.todo, [...(groups.get(failure.todo) ?? []), failure]);
    if (groups.size === 0) t.pass(`${check}`);
    for (const [todo, group] of groups) {
      const diagnostic = {
        diagnostic: true,
        failures: group.length,
        examples: group
          .slice(0, 3)
          .map((failure) => ({ kind: failure.kind, request: failure.request, status: failure.status, detail: failure.detail })),
      };
      t.equal(group.length, 0, `${check}${todo ? ` (${group.length} examples)` : ''}`, todo ? { todo, ...diagnostic } : diagnostic);
    }
  }
}

t.test('the document', async (t) => {
  t.match(world.document.openapi, /^3\.1\./, 'OpenAPI 3.1');
  t.ok(world.operations.length > 0, `${world.operations.length} operations`);
  for (const operation of world.operations) {
    // every request schema is in the subset the tester reads (an unknown keyword throws here)
    t.doesNotThrow(() => {
      validRequest(world, operation);
      invalidRequest(world, operation);
    }, `${operation.id}: its parameters and body are generated from the document`);
  }
});

t.test('the checks can fail: a spoiled real answer is caught by each', async (t) => {
  const list = world.operations.find((operation) => operation.method === 'GET' && operation.path === '/api/v1/api-tokens');
  if (!list) return t.fail('the document has GET /api/v1/api-tokens');
  const real = await world.ctx.app.inject({
    method: 'GET',
    url: '/api/v1/api-tokens',
    headers: { authorization: `Bearer ${world.jwt.employee}` },
  });
  t.same(checkAnswer(world.book, list, real), [], 'the real answer passes');
  const spoil = (change: (answer: { statusCode: number; headers: Record<string, unknown>; body: string }) => void) => {
    const copy = { statusCode: real.statusCode, headers: { ...real.headers } as Record<string, unknown>, body: real.body };
    change(copy);
    return checkAnswer(world.book, list, copy as unknown as LightMyRequestResponse).map((finding) => finding.check);
  };
  const body = parseBody(real) as { data: Array<Record<string, unknown>>; meta: Record<string, unknown> };
  t.ok(
    spoil((answer) => {
      answer.body = JSON.stringify({ data: body.data });
    }).includes('body matches the documented schema'),
    'a body without meta',
  );
  t.ok(
    spoil((answer) => {
      answer.body = JSON.stringify({ ...body, data: [{ ...body.data[0], token: 'ctk_x' }] });
    }).includes('body matches the documented schema'),
    'a token object with an undocumented field',
  );
  t.ok(
    spoil((answer) => {
      delete answer.headers['x-request-id'];
    }).includes('documented headers present, with their types'),
    'no X-Request-Id',
  );
  t.ok(
    spoil((answer) => {
      answer.headers['x-ratelimit-remaining'] = '-1';
    }).includes('documented headers present, with their types'),
    'X-RateLimit-Remaining below its minimum',
  );
  t.ok(
    spoil((answer) => {
      answer.headers['content-type'] = 'text/html';
    }).includes('body is application/json'),
    'a text/html body',
  );
  t.ok(
    spoil((answer) => {
      answer.statusCode = 418;
    }).includes('status is documented'),
    'an undocumented status',
  );
  t.ok(
    spoil((answer) => {
      answer.statusCode = 502;
    }).includes('no 5xx'),
    'a 502',
  );
  t.ok(
    spoil((answer) => {
      answer.statusCode = 401;
      answer.body = JSON.stringify({ error: { code: 'unauthorized', message: 'x' } });
    }).includes('documented headers present, with their types'),
    'a 401 without WWW-Authenticate',
  );
  t.ok(
    spoil((answer) => {
      answer.statusCode = 400;
      answer.body = JSON.stringify({ error: { code: 'bad', message: 'x' } });
    }).includes('error code matches the status (contract, "Errors")'),
    'a 400 with another code',
  );
});

for (const [index, operation] of world.operations.entries()) {
  t.test(operation.id, async (t) => {
    const seed = SEED + 2 * index;
    // fresh live tokens to act on, so revoke and rotate meet live ones and spent ones alike
    if (operation.parameters.some((parameter) => parameter.name === 'token_id')) await topUpTargets(world, 4);
    await prepareWebhooks(world, operation);
    await fc.assert(
      fc.asyncProperty(validRequest(world, operation), async (example) => void (await exercise(world, example))),
      { seed, numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(invalidRequest(world, operation), async (example) => void (await exercise(world, example))),
      { seed: seed + 1, numRuns: RUNS },
    );
    assertChecks(t, operation);
  });
}

t.test('stateful links: create -> retrieve -> rotate -> revoke -> retrieve', async (t) => {
  await runLinks(t, world, { seed: SEED - 1, numRuns: Math.max(4, Math.round(RUNS / 5)) });
});

t.test('stateful links of webhook endpoints: create -> retrieve -> test -> deliveries -> replay -> rotate-secret -> delete', async (t) => {
  await runWebhookLinks(t, world, { seed: SEED - 2, numRuns: Math.max(4, Math.round(RUNS / 5)) });
});

t.test("real rate limits: every operation's 429 conforms", async (t) => {
  await runRateLimits(t);
});

t.test('summary', async (t) => {
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  let total = 0;
  t.comment(`seed ${SEED} (FC_SEED), ${RUNS} valid + ${RUNS} invalid examples per operation (FC_RUNS), ${seconds} s`);
  t.comment(`${ledger.examples.size} of ${world.operations.length} operations covered:`);
  for (const [operation, counts] of ledger.examples) {
    total += counts.valid + counts.invalid;
    const statuses = [...counts.statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}x${count}`)
      .join(' ');
    t.comment(
      `  ${operation}: ${counts.valid} valid, ${counts.invalid} invalid (${counts.kinds.size - 1} kinds of wrong); answers ${statuses}`,
    );
  }
  t.comment(`${total} examples in all`);
  const byCheck = new Map<string, { failed: number; todo: number }>();
  for (const failure of ledger.failures) {
    const entry = byCheck.get(failure.check) ?? { failed: 0, todo: 0 };
    entry[failure.todo ? 'todo' : 'failed']++;
    byCheck.set(failure.check, entry);
  }
  t.comment(byCheck.size === 0 ? 'no failures' : 'failures by kind (examples):');
  for (const [check, { failed, todo }] of byCheck) t.comment(`  ${check}: ${failed} failing, ${todo} known (todo)`);
  const todos = new Map<string, number>();
  for (const failure of ledger.failures) if (failure.todo) todos.set(failure.todo, (todos.get(failure.todo) ?? 0) + 1);
  if (todos.size > 0) t.comment('known disagreements of src/ with the document (todo):');
  for (const [todo, count] of todos) t.comment(`  [${count}] ${todo}`);
  t.equal(ledger.examples.size, world.operations.length, 'every operation of the document was exercised');
});
