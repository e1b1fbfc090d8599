// A fast-check property as one tap assertion: a failure reports the shrunk counterexample and the
// seed and path that replay it (fc.check(property, { seed, path })).
import fc from 'fast-check';
import type { Test } from 'tap';

export function check<Ts extends [unknown, ...unknown[]]>(t: Test, name: string, property: fc.IProperty<Ts>, numRuns: number) {
  const details = fc.check(property, { numRuns });
  t.ok(
    !details.failed,
    `${name} (${details.numRuns} runs)`,
    details.failed
      ? {
          error: details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance),
          report: fc.defaultReportMessage(details),
        }
      : {},
  );
}
