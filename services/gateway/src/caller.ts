import type { Principal } from '@arbiter/contracts';
import type { Caller } from '@arbiter/key-auth';

export type { Caller } from '@arbiter/key-auth';

/**
 * What the HTTP authentication hooks need of identity: credentials turned into callers, each
 * request counted by the same step. `identity/authenticator.ts` implements it; `http/` and
 * `identity/` both import this module, never each other.
 */
export interface CallerAuthenticator {
  /** An `x-api-key` sent from `address`. */
  byApiKey(key: string, address: string): Promise<Caller>;
  /** An `Authorization: Bearer` JWT. */
  byBearer(token: string): Promise<Caller>;
  /** The caller `key` names in the database now, its cached grant having been found stale. */
  reread(key: string): Promise<Principal>;
}
