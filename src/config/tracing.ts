// Tracing (OpenTelemetry), off unless an OTLP endpoint is configured: the standard OTEL_* variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/), checked
// here like every other setting so that a typo stops start-up with one line instead of a service
// that silently exports nothing. What they turn on: docs/tracing.md.
import { z } from 'zod';
import { ConfigError } from './checks.js';
import { optionalText } from './env.js';

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;

export type TracesSampler = (typeof SAMPLERS)[number];
export type OtlpProtocol = (typeof PROTOCOLS)[number];

const httpUrl = (message: string) =>
  optionalText.pipe(
    z
      .string()
      .refine((value) => {
        try {
          const url = new URL(value);
          return /^https?:$/.test(url.protocol) && !url.username && !url.password;
        } catch {
          return false;
        }
      }, message)
      .optional(),
  );

/** `key=value,key2=value2`, values percent-decoded (W3C Baggage octets, as the SDK reads them). */
export function keyValueList(text: string): Record<string, string> | null {
  const entries: Record<string, string> = {};
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const at = entry.indexOf('=');
    if (at < 1) return null;
    const key = entry.slice(0, at).trim();
    let value: string;
    try {
      value = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      return null;
    }
    if (!/^[!#-'*+\-.^_`|~\w]+$/.test(key)) return null;
    entries[key] = value;
  }
  return entries;
}

const keyValues = (what: string) =>
  optionalText.pipe(
    z
      .string()
      .transform((text, ctx) => {
        const parsed = keyValueList(text);
        if (parsed === null) {
          // the value is never echoed: OTLP headers carry a vendor's API key
          ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of key=value ${what} (values percent-encoded)` });
          return z.NEVER;
        }
        return parsed;
      })
      .optional(),
  );

const protocol = optionalText.pipe(
  z.enum(PROTOCOLS, { error: 'must be http/protobuf or http/json (grpc is not built in: use a collector for it)' }).optional(),
);

export const tracingVariables = {
  OTEL_SDK_DISABLED: optionalText.pipe(z.enum(['true', 'false'], { error: 'must be true or false' }).optional()),
  OTEL_TRACES_EXPORTER: optionalText.pipe(
    z.enum(['otlp', 'none'], { error: 'must be otlp or none (the only exporters built in)' }).optional(),
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl('must be an http:// or https:// URL without credentials (e.g. http://otel-collector:4318)'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl(
    'must be an http:// or https:// URL without credentials (e.g. http://otel-collector:4318/v1/traces)',
  ),
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_HEADERS: keyValues('headers'),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValues('headers'),
  OTEL_TRACES_SAMPLER: optionalText.pipe(z.enum(SAMPLERS, { error: `must be one of ${SAMPLERS.join(', ')}` }).optional()),
  OTEL_TRACES_SAMPLER_ARG: optionalText.pipe(
    z
      .string()
      .regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, 'must be a sampling ratio from 0 to 1 (e.g. 0.01 for 1 %)')
      .transform(Number)
      .optional(),
  ),
  OTEL_SERVICE_NAME: optionalText.pipe(
    z
      .string()
      .regex(/^[\x21-\x7e][\x20-\x7e]{0,254}$/, 'must be 1..255 printable characters')
      .optional(),
  ),
  OTEL_RESOURCE_ATTRIBUTES: keyValues('attributes'),
};

export interface TracingSettings {
  /** where spans are posted: the traces endpoint itself (…/v1/traces) */
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  sampler: TracesSampler;
  /** the ratio of the traceidratio samplers */
  ratio: number;
  serviceName: string;
  resourceAttributes: Record<string, string>;
}

export interface TracingConfig {
  /** null: tracing off, nothing of OpenTelemetry is loaded */
  tracing: TracingSettings | null;
}

const DEFAULT_ENDPOINT = 'http://localhost:4318';

/**
 * On when an OTLP endpoint is set (or OTEL_TRACES_EXPORTER=otlp asks for the default one), unless
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. The endpoint variables mean what the
 * specification says: the general one is a base URL (/v1/traces is appended), the traces one is
 * used as it is.
 */
export function tracingConfigOf(e: z.infer<z.ZodObject<typeof tracingVariables>>): TracingConfig {
  const asked =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? e.OTEL_EXPORTER_OTLP_ENDPOINT ?? (e.OTEL_TRACES_EXPORTER === 'otlp' ? '' : undefined);
  if (asked === undefined || e.OTEL_SDK_DISABLED === 'true' || e.OTEL_TRACES_EXPORTER === 'none') return { tracing: null };
  const sampler = e.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on';
  if (e.OTEL_TRACES_SAMPLER_ARG !== undefined && !sampler.endsWith('traceidratio')) {
    throw new ConfigError(
      'OTEL_TRACES_SAMPLER_ARG',
      `is set but OTEL_TRACES_SAMPLER is ${sampler}: a ratio needs traceidratio or parentbased_traceidratio`,
    );
  }
  const url =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(e.OTEL_EXPORTER_OTLP_ENDPOINT ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/v1/traces`;
  return {
    tracing: {
      url,
      protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
      headers: { ...e.OTEL_EXPORTER_OTLP_HEADERS, ...e.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
      sampler,
      ratio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
      serviceName: e.OTEL_SERVICE_NAME ?? e.OTEL_RESOURCE_ATTRIBUTES?.['service.name'] ?? 'coldtrack-api',
      resourceAttributes: e.OTEL_RESOURCE_ATTRIBUTES ?? {},
    },
  };
}
