import type { Principal } from '@arbiter/contracts';
import type { RateUse } from './limits/rate-count.js';

/**
 * An authenticated caller and its request's count against its rate limit (`null`: not counted, a
 * bearer caller's count being lost to a Redis outage).
 */
export interface Caller {
  readonly principal: Principal;
  readonly rate: RateUse | null;
}

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
