// P17's figures from the runs of scenario webhook-revoke-beside-mixed (kit/webhook-revokes.ts): the
// runs' latency histograms merged, their counts summed, and the verdict's inputs. targets.ts judges.
import { latencyOf, type LatencyMs } from './histograms.js';
import type { ScenarioResult } from './results.js';
import type { WebhookFigures } from './webhook-revokes.js';

export const WEBHOOK_SCENARIO = 'webhook-revoke-beside-mixed';
/** P17: from a revoke's commit to its delivery's first byte, p99 at most this */
export const P17_P99_MS = 1000;

const fixed = (value: number, digits = 1) => value.toFixed(digits);

/** One run's figures in a line, for the progress log. */
export function webhookLine(figures: WebhookFigures | { error: string }): string {
  if ('error' in figures) return `not measured: ${figures.error}`;
  const sent = latencyOf([figures.fromSentHistogram])!;
  const answered = latencyOf([figures.fromAnswerHistogram])!;
  return (
    `${figures.deliveries} deliveries of ${figures.revokes} revokes, p99 ${fixed(sent.p99)} ms from the revoke sent ` +
    `(${fixed(answered.p99)} ms from its answer), missing ${figures.missing}, duplicates ${figures.duplicates}, ` +
    `badly signed ${figures.badlySigned}, unexpected ${figures.unexpected}, revoke failures ${figures.revokeFailures.length}`
  );
}

export type WebhookJudgement =
  { notMeasured: string } | { pass: boolean; p99Ms: number; measured: string; detail: string; fromSent: LatencyMs; fromAnswer: LatencyMs };

/** The project's runs together: a miss when p99 is over the line or any revoke went undelivered, badly signed or failed. */
export function judgeWebhooks(scenario: ScenarioResult | undefined): WebhookJudgement {
  if (!scenario) return { notMeasured: `scenario ${WEBHOOK_SCENARIO} was not run (--only)` };
  if (scenario.status !== 'measured') return { notMeasured: scenario.reason ?? 'not run' };
  const outcomes = scenario.runs.filter((run) => run.server === 'project').map((run) => run.webhook);
  const runs = outcomes.filter((outcome): outcome is WebhookFigures => !!outcome && 'revokes' in outcome);
  const errors = outcomes.filter((outcome): outcome is { error: string } => !!outcome && 'error' in outcome);
  if (runs.length === 0) return { notMeasured: errors[0]?.error ?? 'no webhook figures in the runs' };
  const sum = (pick: (figures: WebhookFigures) => number) => runs.reduce((total, figures) => total + pick(figures), 0);
  const revokes = sum((f) => f.revokes);
  if (revokes === 0) return { notMeasured: `no revoke succeeded (${runs.flatMap((f) => f.revokeFailures).join(', ')})` };
  const fromSent = latencyOf(runs.map((f) => f.fromSentHistogram))!;
  const fromAnswer = latencyOf(runs.map((f) => f.fromAnswerHistogram))!;
  const [deliveries, missing, duplicates, badlySigned, unexpected] = [
    sum((f) => f.deliveries),
    sum((f) => f.missing),
    sum((f) => f.duplicates),
    sum((f) => f.badlySigned),
    sum((f) => f.unexpected),
  ];
  const revokeFailures = runs.flatMap((f) => f.revokeFailures);
  const pass = fromSent.p99 <= P17_P99_MS && missing === 0 && badlySigned === 0 && revokeFailures.length === 0;
  return {
    pass,
    p99Ms: fromSent.p99,
    fromSent,
    fromAnswer,
    measured:
      `p99 ${fixed(fromSent.p99)} ms from the revoke sent to the first byte (p50 ${fixed(fromSent.p50)}, max ${fixed(fromSent.max)} ms), ` +
      `${revokes - missing} of ${revokes} revokes delivered`,
    detail:
      `from the revoke's answer (a lower bound: the commit comes before it): p99 ${fixed(fromAnswer.p99)} ms, p50 ${fixed(fromAnswer.p50)} ms; ` +
      `${runs.length} run${runs.length > 1 ? 's' : ''} merged; ${deliveries} deliveries, missing ${missing}, duplicates ${duplicates}, ` +
      `badly signed ${badlySigned}, unexpected ${unexpected}; revoke failures ${revokeFailures.length ? revokeFailures.join(', ') : 'none'}` +
      (errors.length ? `; runs not measured: ${errors.map((e) => e.error).join('; ')}` : ''),
  };
}
