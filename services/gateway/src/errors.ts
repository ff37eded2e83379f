import { ArbiterError } from '@arbiter/contracts';

export { RetryLaterError } from '@arbiter/key-auth';

/**
 * A change found that the caller's key grant names a key (or owner) the database does not have:
 * the grant was cached from a database that has since been replaced or restored. Routes that
 * write the key id re-read the grant (`Authenticator.reread`) and try once more.
 */
export class StaleGrantError extends ArbiterError {
  constructor(options?: { cause?: unknown }) {
    super(
      'unauthenticated',
      'the API key in use is not in the database (it was replaced or restored): send the request again',
      undefined,
      options,
    );
  }
}
