import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ArbiterError, type Principal, type Scope } from '@arbiter/contracts';
import { capabilityRefusal } from '@arbiter/key-auth';
import type { Caller, CallerAuthenticator } from '../caller.js';
import { StaleGrantError } from '../errors.js';
import { applyRateLimit } from './rate-limit.js';
import { handedOver } from './run-lane.js';

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
  authenticator: CallerAuthenticator,
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

/** Makes `caller` the request's principal and holds the request to the rate limit its authentication counted it against. */
function admit(request: FastifyRequest, reply: FastifyReply, caller: Caller): void {
  request.principal = caller.principal;
  if (caller.rate !== null) applyRateLimit(reply, caller.rate);
}

/** Authenticates `request` by an API key and rate-limits it (the key lookup counted it). */
export async function authenticateApiKey(
  request: FastifyRequest,
  reply: FastifyReply,
  authenticator: CallerAuthenticator,
  key: string,
): Promise<void> {
  admit(request, reply, await authenticator.byApiKey(key, request.ip));
}

/**
 * Installs the hook that authenticates and rate-limits every route of this (encapsulated) plugin.
 * An `x-api-key` header is used when present; otherwise `Authorization: Bearer <JWT>` when the
 * policy allows it. No credential → `unauthenticated`. Authentication counts the request (see
 * {@link CallerAuthenticator}); past the caller's limit → 429 `rate_limited`, before any route hook.
 */
export function authenticate(app: FastifyInstance, authenticator: CallerAuthenticator, policy: CredentialPolicy): void {
  app.addHook('onRequest', async (request, reply) => {
    // The run lane looked the key up already (and counted the request): its outcome stands.
    const lane = handedOver(request.raw);
    if (lane !== undefined) {
      if ('error' in lane.auth) throw lane.auth.error;
      admit(request, reply, lane.auth.caller);
      return;
    }
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey === 'string' && apiKey !== '') {
      await authenticateApiKey(request, reply, authenticator, apiKey);
      return;
    }
    if (Array.isArray(apiKey)) throw new ArbiterError('unauthenticated', 'send exactly one `x-api-key` header');
    if (policy === 'api-key-only') {
      throw new ArbiterError('unauthenticated', 'this endpoint requires an API key in the `x-api-key` header');
    }
    const authorization = request.headers.authorization;
    const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (match?.[1] !== undefined) {
      admit(request, reply, await authenticator.byBearer(match[1]));
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
    done(capabilityRefusal(principalOf(request), scope));
  };
}
