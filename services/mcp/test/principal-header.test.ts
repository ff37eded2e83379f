import { decodePrincipalHeader, encodePrincipalHeader, MAX_PRINCIPAL_HEADER_LENGTH, type Principal } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';

describe('principal header (contracts, shared with the gateway)', () => {
  const principal: Principal = { orgId: 'acme', userId: 'mara@example.com', role: 'editor', apiKeyId: 'k1', scopes: ['view', 'edit'] };

  it('round-trips a principal as unpadded base64url JSON', () => {
    const value = encodePrincipalHeader(principal);
    expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(value, 'base64url').toString('utf8'))).toEqual(principal);
    expect(decodePrincipalHeader(value)).toEqual(principal);
  });

  it('returns undefined for absent, oversized, malformed or invalid values', () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    expect(decodePrincipalHeader(undefined)).toBeUndefined();
    expect(decodePrincipalHeader('')).toBeUndefined();
    expect(decodePrincipalHeader('a'.repeat(MAX_PRINCIPAL_HEADER_LENGTH + 1))).toBeUndefined();
    expect(decodePrincipalHeader('eyJ+')).toBeUndefined();
    expect(decodePrincipalHeader(Buffer.from('{').toString('base64url'))).toBeUndefined();
    expect(decodePrincipalHeader(b64({ ...principal, role: 'root' }))).toBeUndefined();
    expect(decodePrincipalHeader(b64([principal]))).toBeUndefined();
  });

  it('refuses to encode an invalid principal', () => {
    expect(() => encodePrincipalHeader({ ...principal, scopes: ['everything'] } as unknown as Principal)).toThrow();
  });
});
