import { ArbiterError, type Principal } from '@arbiter/contracts';
import type { Db } from '../db/database.js';
import { findGrantByHash, type ApiKeyGrant } from '../repositories/api-keys.js';
import { ensureMember } from '../repositories/members.js';
import { orgExists } from '../repositories/orgs.js';
import { hashApiKey } from './api-key-secret.js';
import type { ApiKeyCache } from './key-cache.js';
import type { TokenVerifier } from './jwt.js';

/** Longest `x-api-key` value looked up; anything longer cannot be one of ours. */
const MAX_KEY_LENGTH = 512;

/** Turns a credential into the caller's {@link Principal}, or throws `unauthenticated`. */
export class Authenticator {
  constructor(
    private readonly db: Db,
    private readonly cache: ApiKeyCache,
    private readonly verifyToken: TokenVerifier,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Authenticates a personal API key: known, not revoked, not expired, owner still a member.
   * The principal carries the owner's current role and the key's scopes; the effective rights
   * are their intersection (`capabilitiesOf`).
   */
  async byApiKey(key: string): Promise<Principal> {
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw invalidKey();
    const keyHash = hashApiKey(key);
    let grant = await this.cache.get(keyHash);
    if (grant === undefined) {
      grant = await findGrantByHash(this.db, keyHash);
      if (grant === undefined) throw invalidKey();
      await this.cache.fill(keyHash, grant);
    }
    return this.principalOf(grant);
  }

  /**
   * Authenticates a bearer JWT: the org must exist; a user the org does not know yet is added
   * as a viewer. The role comes from the membership table, never from the token.
   */
  async byBearer(token: string): Promise<Principal> {
    const { orgId, userId } = await this.verifyToken(token);
    if (!(await orgExists(this.db, orgId))) {
      throw new ArbiterError('unauthenticated', `invalid bearer token: org \`${orgId}\` is unknown`);
    }
    const role = await ensureMember(this.db, orgId, userId, 'viewer');
    return { orgId, userId, role };
  }

  private principalOf(grant: ApiKeyGrant): Principal {
    if (grant.revokedAt !== null) throw new ArbiterError('unauthenticated', 'the API key has been revoked');
    if (grant.expiresAt !== null && grant.expiresAt.getTime() <= this.now().getTime()) {
      throw new ArbiterError('unauthenticated', 'the API key has expired');
    }
    if (grant.role === null) throw new ArbiterError('unauthenticated', 'the owner of the API key is no longer a member');
    return { orgId: grant.orgId, userId: grant.userId, role: grant.role, apiKeyId: grant.apiKeyId, scopes: grant.scopes };
  }
}

function invalidKey(): ArbiterError {
  return new ArbiterError('unauthenticated', 'the API key is not valid');
}
