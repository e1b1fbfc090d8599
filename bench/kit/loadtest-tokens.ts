// The API tokens a loadtest creates with the employee's JWT, and their revocation. Enough tokens
// that the asked rate keeps each under 90 of its 100 requests a minute; each named
// `loadtest <start> #i`, expiring a day later (a safety net should the revocation never run), and
// revoked at the end whatever happens: after the run, on an error and on Ctrl-C. The revocation
// waits for a creation in flight and revokes every token it knows; when a creation failed without
// a clear refusal (a timeout, a lost answer, a 5xx), it also revokes any active token of the run's
// name it did not know. Raw values stay in memory: nothing here prints or writes them.
import { type ApiToken, ColdtrackApiError, ColdtrackClient, RateBudget } from '@coldtrack/client';
import type { Scope } from '../../src/tokens/scopes.js';
import { TOKEN_LIMIT_PER_MINUTE } from './config.js';

/** What each token is planned to carry: its limit less room for the probes and uneven laps. */
export const PLANNED_PER_TOKEN_PER_MINUTE = 90;
const EXPIRY_MS = 24 * 3600 * 1000;

/** Tokens that carry `rate` requests a second under PLANNED_PER_TOKEN_PER_MINUTE each. */
export const tokensForRate = (rate: number) => Math.ceil((rate * 60) / PLANNED_PER_TOKEN_PER_MINUTE);

/** The rate `count` tokens carry within their limit (the --tokens-file check). */
export const rateOfTokens = (count: number) => (count * TOKEN_LIMIT_PER_MINUTE) / 60;

export interface RevocationOutcome {
  revoked: number;
  /** what may still be active: tokens by id (or a creation that went unanswered), with why */
  failed: { id: string; reason: string }[];
}

const describe = (error: unknown) =>
  error instanceof ColdtrackApiError ? `${error.status} ${error.code}` : error instanceof Error ? error.message : String(error);

export class LoadtestTokens {
  private readonly client: ColdtrackClient;
  private readonly created: ApiToken[] = [];
  private closed = false;
  private attempted = false;
  /** a creation failed without saying no token was made */
  private uncertain = false;
  private inFlight: Promise<unknown> = Promise.resolve();
  private revocation: Promise<RevocationOutcome> | null = null;
  readonly expiresAt: Date;

  constructor(
    baseUrl: URL,
    jwt: string,
    /** `loadtest <start> #`: the run's tokens are this and a number */
    readonly namePrefix: string,
    private readonly log: (line: string) => void,
    now = new Date(),
  ) {
    // writes have a budget of their own (120 a minute): the client waits for it rather than be refused
    this.client = new ColdtrackClient({
      baseUrl: baseUrl.href,
      token: jwt,
      budget: new RateBudget(),
      onEvent: (event) => {
        if (event.type === 'rate-limit-wait')
          log(`  waiting ${(event.ms / 1000).toFixed(0)} s for the employee's write budget (120 a minute)`);
      },
    });
    this.expiresAt = new Date(now.getTime() + EXPIRY_MS);
  }

  /** How many were created (and are to be revoked). */
  get count(): number {
    return this.created.length;
  }

  /** Creates `count` tokens with these scopes, one after another; their raw values, in memory only. */
  async create(count: number, scopes: Scope[]): Promise<string[]> {
    const raw: string[] = [];
    for (let i = 1; i <= count; i++) {
      if (this.closed) throw new Error('interrupted while creating tokens');
      this.attempted = true;
      const creation = (async () => {
        const { token, ...record } = await this.client.tokens.create({
          name: `${this.namePrefix}${i}`,
          scopes,
          expires_at: this.expiresAt.toISOString(),
        });
        this.created.push(record); // before the revocation, waiting for this creation, reads the list
        return token;
      })();
      this.inFlight = creation.catch(() => undefined);
      try {
        raw.push(await creation);
      } catch (error) {
        // only a refusal (400, 401, 403...) says no token was made; a 5xx, a timeout or a lost answer may hide one
        if (!(error instanceof ColdtrackApiError && error.permanent)) this.uncertain = true;
        throw error;
      }
      if (i === count || i % 25 === 0) this.log(`  created ${i} of ${count} tokens`);
    }
    return raw;
  }

  /** Revokes every token of the run, once however often it is called (the run's end, Ctrl-C, an error). */
  revokeAll(): Promise<RevocationOutcome> {
    this.revocation ??= this.revokeEverything();
    return this.revocation;
  }

  private async revokeEverything(): Promise<RevocationOutcome> {
    this.closed = true;
    await this.inFlight; // a creation under way: its token is known once it answers
    const outcome: RevocationOutcome = { revoked: 0, failed: [] };
    if (!this.attempted) return outcome;
    this.log(`revoking the ${this.created.length} tokens created`);
    let unreachable: string | null = null;
    const revoke = async (id: string) => {
      if (unreachable) {
        outcome.failed.push({ id, reason: unreachable });
        return;
      }
      try {
        await this.client.tokens.revoke(id);
        outcome.revoked++;
      } catch (error) {
        outcome.failed.push({ id, reason: describe(error) });
        // no answer after the client's retries: every other token would wait as long for nothing
        if (!(error instanceof ColdtrackApiError)) unreachable = `not tried: the deployment did not answer (${describe(error)})`;
      }
    };
    for (const token of this.created) await revoke(token.id);
    // a creation without a clear answer may have made a token all the same: found by its name
    if (this.uncertain) {
      try {
        if (unreachable) throw new Error(unreachable);
        const known = new Set(this.created.map((token) => token.id));
        const creator = this.created[0]?.created_by;
        for await (const token of this.client.paginate('tokens', { state: 'active' })) {
          if (!token.name.startsWith(this.namePrefix) || known.has(token.id)) continue;
          if (creator !== undefined && token.created_by !== creator) continue;
          this.log(`  revoking ${token.name}, created without its answer reaching the loadtest`);
          await revoke(token.id);
        }
      } catch (error) {
        outcome.failed.push({ id: '(a token whose creation went unanswered)', reason: `the search for it failed: ${describe(error)}` });
      }
    }
    const failures = outcome.failed.length ? `; ${outcome.failed.length} failed (${outcome.failed[0]!.reason})` : '';
    this.log(`revoked ${outcome.revoked} tokens${failures}`);
    return outcome;
  }
}
