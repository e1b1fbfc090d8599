// The last guard between a span and the exporter: whatever code put into a span's attributes,
// events or status, a token, a JWT or a secret query parameter is masked before the span leaves
// the process, as the logs mask them (src/logging.ts redactSecrets). The spans are built not to
// hold any (no headers, no query strings, no SQL values, no error messages); this catches a
// future attribute that would. onEnding runs while the span can still be changed.
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import { redactSecrets } from '../logging.js';

const scrub = (value: unknown) => (typeof value === 'string' ? redactSecrets(value) : value);

export class SecretScrubber implements SpanProcessor {
  onStart(_span: Span, _context: Context): void {}

  onEnding(span: Span): void {
    for (const [key, value] of Object.entries(span.attributes)) {
      const clean = scrub(value);
      if (clean !== value) span.setAttribute(key, clean as string);
    }
    for (const event of span.events) {
      for (const [key, value] of Object.entries(event.attributes ?? {})) {
        if (typeof value === 'string') (event.attributes as Record<string, unknown>)[key] = redactSecrets(value);
      }
    }
    if (span.status.message) span.setStatus({ ...span.status, message: redactSecrets(span.status.message) });
  }

  onEnd(_span: ReadableSpan): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
