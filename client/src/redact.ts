// Keeps credentials out of the text the client puts into errors and events: the client's own
// token wherever it occurs, and anything shaped like an API token (`ctk_` and 8 or more base62
// characters, the service's own redaction pattern, src/tokens/format.ts), since a message the
// server echoes may carry another token too. Applied to everything that came from the wire before
// it becomes part of an error's message or details.

const TOKEN_LIKE = /ctk_[0-9A-Za-z]{8,}/g;
export const REDACTED = '[redacted]';

/** A function that redacts `secret` (when it is long enough to be one) and token-shaped text. */
export function redactorFor(secret: string | undefined): (text: string) => string {
  const exact = secret && secret.length >= 8 ? secret : null;
  return (text) => {
    const withoutSecret = exact ? text.split(exact).join(REDACTED) : text;
    return withoutSecret.replace(TOKEN_LIKE, REDACTED);
  };
}

/** The same for a JSON value: every string in it, keys included, depth-limited. */
export function redactValue<T>(value: T, redact: (text: string) => string, depth = 0): T {
  if (typeof value === 'string') return redact(value) as T;
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item: unknown) => redactValue(item, redact, depth + 1)) as T;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [redact(key), redactValue(item, redact, depth + 1)]),
  ) as T;
}
