import { ArbiterError } from '@arbiter/contracts';
import { KeyAuthenticator, type KeyAuthenticatorOptions, type RateCounter } from '@arbiter/key-auth';
import { ensureMember } from '../repositories/members.js';
import { orgExists } from '../repositories/orgs.js';
import type { Caller, CallerAuthenticator } from '../caller.js';
import type { TokenVerifier } from './jwt.js';

/**
 * Turns a credential into the caller's principal, or throws `unauthenticated`; the same step
 * counts the request against the caller's rate limit. API keys are authenticated as on every door
 * ({@link KeyAuthenticator}); bearer JWTs only here.
 */
export class Authenticator extends KeyAuthenticator implements CallerAuthenticator {
  constructor(
    options: KeyAuthenticatorOptions,
    /** Counts bearer callers' requests (API-key requests are counted by the cache lookup). */
    private readonly counter: RateCounter,
    private readonly verifyToken: TokenVerifier,
  ) {
    super(options);
  }

  /**
   * Authenticates a bearer JWT: the org must exist; a user the org does not know yet is added
   * as a viewer, unless an admin removed that user from the org (`forbidden` until an admin adds
   * them back). The role comes from the membership table, never from the token. The request
   * counts in the user's person bucket; with Redis down it goes uncounted (`rate: null`) rather
   * than fail (API-key callers, whose grants are cached in Redis, get 503 instead).
   */
  async byBearer(token: string): Promise<Caller> {
    const { orgId, userId } = await this.verifyToken(token);
    if (!(await orgExists(this.db, orgId))) {
      throw new ArbiterError('unauthenticated', `invalid bearer token: org \`${orgId}\` is unknown`);
    }
    const role = await ensureMember(this.db, orgId, userId, 'viewer');
    if (role === 'removed') {
      throw new ArbiterError(
        'forbidden',
        `user \`${userId}\` was removed from org \`${orgId}\`; their tokens are refused until an admin adds them back (\`PUT /users/{userId}\`)`,
      );
    }
    const rate = await this.counter.person(orgId, userId).catch(() => null);
    return { principal: { orgId, userId, role }, rate };
  }
}
