// How long a process may serve a token from its cache before re-reading it: a safety net only,
// since revocations reach every cache at once (src/tokens/revocation.ts). Its own module because
// both the authenticator and the revocation bus depend on it, and not on each other.
export const TOKEN_CACHE_TTL_MS = 30_000;
