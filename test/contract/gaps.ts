// Known disagreements between the service and its document or contract (issue 18). Each one keeps
// its check: the failing assertion is marked `todo` with what src/ must fix, so the suite stays
// green while the lead fixes src/ and then deletes the entry here. An entry matches only the
// failures it describes (operation, kind of request, check, answer); anything else stays a failure.
import type { LightMyRequestResponse } from 'fastify';
import type { Check, Finding } from './checks.js';
import type { Example } from './examples.js';

interface Gap {
  todo: string;
  matches(example: Example, check: Check, response: LightMyRequestResponse): boolean;
}

export const GAPS: Gap[] = [];

export function knownGap(example: Example, finding: Finding, response: LightMyRequestResponse): string | undefined {
  return GAPS.find((gap) => gap.matches(example, finding.check, response))?.todo;
}
