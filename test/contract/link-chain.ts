// What the links tests (links.ts for tokens, webhook-links.ts for webhook endpoints) share: each
// step's problems collected across fast-check's sequences and reported once per step at the end,
// the call that sends a valid request as an employee and checks its answer against the document,
// and the comparisons a step makes.
import type { LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import { checkAnswer, parseBody } from './checks.js';
import { send, type Example } from './examples.js';
import type { Operation } from './openapi.js';
import type { World } from './world.js';

export interface ChainCall {
  path?: Record<string, string>;
  query?: Array<[string, string]>;
  body?: unknown;
  headers?: Record<string, string>;
}

export function linkChain(world: World) {
  const steps = new Map<string, string[]>();
  let sequences = 0;
  const expect = (step: string, ok: boolean, detail: () => string) => {
    const problems = steps.get(step) ?? [];
    if (!ok) problems.push(detail());
    steps.set(step, problems);
  };
  const employee = { authorization: `Bearer ${world.jwt.employee}` };
  /** A valid request of `operation` (as the employee unless `headers` say otherwise), its answer checked against the document. */
  const call = async <Body>(step: string, operation: Operation, init: ChainCall) => {
    const example: Example = {
      operation,
      group: 'valid',
      kind: step,
      credential: 'employee JWT',
      headers: init.headers ?? employee,
      path: init.path ?? {},
      query: init.query ?? [],
      ...(init.body !== undefined ? { body: { text: JSON.stringify(init.body), contentType: 'application/json' } } : {}),
    };
    const response = await send(world, example);
    const findings = checkAnswer(world.book, operation, response);
    expect(`${step}: the answer conforms to the document`, findings.length === 0, () =>
      findings.map((finding) => `${finding.check}: ${finding.detail}`).join('; '),
    );
    return { response, body: parseBody(response) as Body };
  };
  const status = (step: string, response: LightMyRequestResponse, expected: number) =>
    expect(`${step}: ${expected}`, response.statusCode === expected, () => `${response.statusCode} ${response.body.slice(0, 200)}`);
  const same = (step: string, actual: unknown, wanted: unknown) =>
    expect(
      step,
      JSON.stringify(actual) === JSON.stringify(wanted),
      () => `${JSON.stringify(actual)?.slice(0, 300)} != ${JSON.stringify(wanted)?.slice(0, 300)}`,
    );
  return {
    expect,
    call,
    status,
    same,
    /** one more sequence started (fast-check's runs that passed its preconditions) */
    started: () => void sequences++,
    /** every step's first problems, once per step, after the sequences */
    report(t: Test, chain: string) {
      t.ok(sequences > 0, `${sequences} ${chain} sequences`);
      for (const [step, problems] of steps) {
        t.same(problems.slice(0, 3), [], `${step}${problems.length ? ` (${problems.length} of ${sequences})` : ''}`);
      }
    },
  };
}
