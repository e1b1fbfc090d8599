// A revoke with revoke's guarantee, for every route that revokes (an employee's revoke, a leak
// report): once the call answers, no process of any instance accepts the token again. The marker
// goes out inside the revoke's transaction, before COMMIT (src/tokens/revocation.ts): when Redis
// cannot take it, nothing is committed and the call is 503; when the commit fails after the
// marker went out, the marker is taken back unless the token is revoked after all.
import type { FastifyBaseLogger } from 'fastify';
import { unavailable } from '../http/errors.js';
import type { App } from '../types.js';

/**
 * Runs `revoke` (the transaction) with the announce it must call before committing, once it has
 * marked the token; `revokedNow` says from its outcome whether it did.
 */
export async function revokeEverywhere<Outcome>(
  app: App,
  log: FastifyBaseLogger,
  token: { companyId: number; tokenId: string },
  revoke: (announce: (tokenId: string) => Promise<void>) => Promise<Outcome>,
  revokedNow: (outcome: Outcome) => boolean,
): Promise<Outcome> {
  const { companyId, tokenId } = token;
  let announced = false;
  let outcome: Outcome;
  try {
    outcome = await revoke(async (id) => {
      try {
        await app.revocations.announce(id);
      } catch (error) {
        log.warn({ err: error }, 'revocation could not reach the shared store; revoke not committed');
        throw unavailable('redis');
      }
      announced = true;
    });
  } catch (error) {
    // the marker went out but the commit failed: take it back if the token is still live
    if (announced) {
      const current = await app.tokenRepository.findToken(companyId, tokenId).catch(() => null);
      if (current && !current.revoked) await app.revocations.withdraw(tokenId);
    }
    throw error;
  }
  if (revokedNow(outcome)) app.revocations.committed(tokenId);
  return outcome;
}
