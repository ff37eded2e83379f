import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { ArbiterError, OrgId, UserId } from '@arbiter/contracts';
import type { JwtSettings } from '../config.js';

/** The identity a verified bearer token names. */
export interface TokenIdentity {
  readonly orgId: string;
  readonly userId: string;
}

/** Verifies a bearer token and returns who it names; throws `unauthenticated` otherwise. */
export type TokenVerifier = (token: string) => Promise<TokenIdentity>;

/**
 * Builds the bearer-token verifier from the settings: HS256 with `secret`, or the keys at
 * `jwksUrl`; `iss` and `aud` are checked when configured; `sub` and `exp` are required.
 * Without key material every bearer token is refused.
 */
export function createTokenVerifier(settings: JwtSettings): TokenVerifier {
  let key: Uint8Array | JWTVerifyGetKey | undefined;
  let algorithms: string[] | undefined;
  if (settings.secret !== undefined) {
    key = new TextEncoder().encode(settings.secret);
    algorithms = ['HS256'];
  } else if (settings.jwksUrl !== undefined) {
    key = createRemoteJWKSet(new URL(settings.jwksUrl));
  }
  const options = {
    ...(algorithms ? { algorithms } : {}),
    ...(settings.issuer !== undefined ? { issuer: settings.issuer } : {}),
    ...(settings.audience !== undefined ? { audience: settings.audience } : {}),
    requiredClaims: ['sub', 'exp'],
    clockTolerance: 5,
  };

  return async (token) => {
    if (key === undefined) {
      throw new ArbiterError('unauthenticated', 'bearer tokens are not enabled on this server; use an `x-api-key`');
    }
    let payload;
    try {
      const verified = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
      payload = verified.payload;
    } catch (err) {
      if (err instanceof joseErrors.JWKSTimeout || !(err instanceof joseErrors.JOSEError)) {
        throw new ArbiterError('dependency_unavailable', 'the identity provider keys cannot be fetched', undefined, { cause: err });
      }
      throw new ArbiterError('unauthenticated', `invalid bearer token: ${describeJoseError(err)}`, undefined, { cause: err });
    }
    const org = OrgId.safeParse(payload[settings.orgClaim]);
    if (!org.success) {
      throw new ArbiterError('unauthenticated', `invalid bearer token: claim \`${settings.orgClaim}\` must name the org`);
    }
    const sub = UserId.safeParse(payload.sub);
    if (!sub.success) throw new ArbiterError('unauthenticated', 'invalid bearer token: claim `sub` is not a valid user id');
    return { orgId: org.data, userId: sub.data };
  };
}

function describeJoseError(err: joseErrors.JOSEError): string {
  if (err instanceof joseErrors.JWTExpired) return 'token expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return `claim \`${err.claim}\` ${err.reason === 'missing' ? 'is missing' : 'is not accepted'}`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature does not verify';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no matching signing key';
  return err.code.toLowerCase().replace(/^err_/, '').replaceAll('_', ' ');
}
