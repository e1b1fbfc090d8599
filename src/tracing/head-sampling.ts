// New traces are sampled before anything is built for them. With the SDK deciding, every request
// (sampled or not) paid for a request span, two random ids in hex, its attributes, a trace context
// and its trip through every choke point: the larger part of tracing's cost at 1 % sampling
// (bench P19 measures it). Here a request that brings no trace context of its own is decided first, one
// Math.random() against the ratio; one that is not sampled goes through as if tracing were off
// (src/tracing/requests.ts skips its span). The SDK's sampler then sees only what was not decided
// here: a span under a local one follows it, and a caller's context (a TRUST_PROXY peer's
// traceparent) is decided as OTEL_TRACES_SAMPLER says.
import { trace, TraceFlags } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import type { TracingSettings } from '../config.js';

type Settings = Pick<TracingSettings, 'sampler' | 'ratio'>;

/** OTEL_TRACES_SAMPLER and its argument, as the specification defines them. */
export function samplerOf(settings: Settings): Sampler {
  const root = settings.sampler.endsWith('traceidratio')
    ? new TraceIdRatioBasedSampler(settings.ratio)
    : settings.sampler.endsWith('always_off')
      ? new AlwaysOffSampler()
      : new AlwaysOnSampler();
  return settings.sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

export interface HeadSampling {
  /** Whether a request that brings no trace context starts a recorded trace. */
  sampleNewTrace(): boolean;
  /** The SDK's sampler: a new trace reaching it was sampled already. */
  sampler: Sampler;
}

const SAMPLED = { decision: SamplingDecision.RECORD_AND_SAMPLED } as const;
const NOT_SAMPLED = { decision: SamplingDecision.NOT_RECORD } as const;

export function headSampling(settings: Settings): HeadSampling {
  const configured = samplerOf(settings);
  const ratio = settings.sampler.endsWith('traceidratio') ? settings.ratio : settings.sampler.endsWith('always_off') ? 0 : 1;
  return {
    sampleNewTrace: ratio >= 1 ? () => true : ratio <= 0 ? () => false : () => Math.random() < ratio,
    sampler: {
      shouldSample(...args: Parameters<Sampler['shouldSample']>) {
        const parent = trace.getSpanContext(args[0]);
        if (!parent) return SAMPLED;
        if (!parent.isRemote) return parent.traceFlags & TraceFlags.SAMPLED ? SAMPLED : NOT_SAMPLED;
        return configured.shouldSample(...args);
      },
      toString: () => `HeadSampling{${configured.toString()}}`,
    },
  };
}
