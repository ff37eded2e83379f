import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { decodePrincipalHeader, hasCapability, McpHeader, type Principal } from '@arbiter/contracts';

/** Outcome of {@link authenticate}: the caller, or the status and one-line reason of a refusal. */
export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; status: 401 | 403; code: 'unauthenticated' | 'forbidden'; message: string };

/**
 * Checks the headers the gateway adds (spec §5.2): the internal token when `internalToken` is set,
 * then a valid principal, then its `view` right. Runs before any MCP processing. Messages never
 * repeat a header value.
 */
export function authenticate(headers: IncomingHttpHeaders, internalToken: string | undefined): AuthResult {
  if (internalToken !== undefined && !sameSecret(single(headers[McpHeader.internalToken]), internalToken)) {
    return { ok: false, status: 401, code: 'unauthenticated', message: `missing or wrong \`${McpHeader.internalToken}\` header` };
  }
  const principal = decodePrincipalHeader(single(headers[McpHeader.principal]));
  if (!principal) {
    return { ok: false, status: 401, code: 'unauthenticated', message: `missing or invalid \`${McpHeader.principal}\` header` };
  }
  if (!hasCapability(principal, 'view')) {
    return { ok: false, status: 403, code: 'forbidden', message: 'the API key needs scope `view`' };
  }
  return { ok: true, principal };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
}

/** Constant-time comparison of two secrets of any length (both are hashed first). */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
