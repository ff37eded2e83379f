import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ArbiterError, hasCapability, ROLE_CAPABILITIES, type Principal, type Scope } from '@arbiter/contracts';
import type { Authenticator } from '../identity/authenticator.js';
import { StaleGrantError } from '../identity/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set by {@link authenticate} before any handler runs. */
    principal: Principal | null;
  }
}

/** Which credentials a group of routes accepts. */
export type CredentialPolicy = 'api-key-or-bearer' | 'api-key-only';

/** The caller set by the auth hook; throws if a route forgot to install it. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === null) throw new Error(`route \`${request.url}\` has no authentication hook`);
  return request.principal;
}

/**
 * Runs `op` as the caller; when it finds the caller's cached key grant stale (the database was
 * replaced or restored since it was cached: {@link StaleGrantError}), re-reads the grant and runs
 * `op` once more as the caller the database now knows.
 */
export async function withFreshGrant<T>(
  request: FastifyRequest,
  authenticator: Authenticator,
  op: (p: Principal) => Promise<T>,
): Promise<T> {
  try {
    return await op(principalOf(request));
  } catch (err) {
    const key = request.headers['x-api-key'];
    if (!(err instanceof StaleGrantError) || typeof key !== 'string') throw err;
    request.log.warn('a cached API-key grant named a key the database does not have: re-read');
    request.principal = await authenticator.reread(key);
    return op(request.principal);
  }
}

/** Authenticates `request` by an API key; the lookup also counted it against the key's rate limit. */
export async function authenticateApiKey(request: FastifyRequest, authenticator: Authenticator, key: string): Promise<void> {
  const caller = await authenticator.byApiKey(key, request.ip);
  request.principal = caller.principal;
  request.rateCount = caller.rateCount;
}

/**
 * Installs the authentication hook on every route of this (encapsulated) plugin. An
 * `x-api-key` header is used when present; otherwise `Authorization: Bearer <JWT>` when the
 * policy allows it. No credential → `unauthenticated`.
 */
export function authenticate(app: FastifyInstance, authenticator: Authenticator, policy: CredentialPolicy): void {
  app.addHook('onRequest', async (request) => {
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey === 'string' && apiKey !== '') {
      await authenticateApiKey(request, authenticator, apiKey);
      return;
    }
    if (Array.isArray(apiKey)) throw new ArbiterError('unauthenticated', 'send exactly one `x-api-key` header');
    if (policy === 'api-key-only') {
      throw new ArbiterError('unauthenticated', 'this endpoint requires an API key in the `x-api-key` header');
    }
    const authorization = request.headers.authorization;
    const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (match?.[1] !== undefined) {
      request.principal = await authenticator.byBearer(match[1]);
      return;
    }
    throw new ArbiterError(
      'unauthenticated',
      authorization === undefined
        ? 'credentials required: send `x-api-key` or `Authorization: Bearer <token>`'
        : 'the `Authorization` header must be `Bearer <token>`',
    );
  });
}

/** Route hook refusing callers whose effective rights (role ∩ key scopes) lack `scope`. */
export function requireCapability(scope: Scope): onRequestHookHandler {
  return function checkCapability(request, _reply, done) {
    const principal = principalOf(request);
    if (hasCapability(principal, scope)) return done();
    const why = !ROLE_CAPABILITIES[principal.role].includes(scope)
      ? `role \`${principal.role}\` does not include \`${scope}\``
      : `the API key lacks scope \`${scope}\``;
    done(new ArbiterError('forbidden', `${why}; this endpoint needs \`${scope}\``));
  };
}
