// POST routes that take no body or an optional one (token revoke and rotate; a webhook endpoint's
// test and rotate-secret), but management clients send `Content-Type: application/json` on every
// POST (docs/contract.md): an empty body with that type must not be a 400 "body is empty". An
// empty body is no body, whatever its type says.
// The header goes instead of the JSON parser being swapped, so a body that is there still gets the
// service's one JSON parser and its rules. Scoped to the plugin that adds the hook.
import type { FastifyRequest } from 'fastify';

export async function emptyBodyIsNoBody(request: FastifyRequest) {
  const { headers } = request.raw;
  const length = headers['content-length'];
  // a chunked body's length is unknown until read: it is parsed as sent
  if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) delete headers['content-type'];
}
