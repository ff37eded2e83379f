import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, generateApiKey, hashApiKey } from '@arbiter/key-auth';

describe('API key hashing', () => {
  // Known answers computed independently with coreutils `printf '<key>' | sha256sum`.
  it.each([
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'], // FIPS 180-2 example
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['arb_5mFZ1kq3Yv8cXfJ0pA9bTn2LrW7sDg4hEo6iUu1ZxQc', '264ea68eb28a5e36e873101b32e7e81f85b366b4982e16ab07b531b3b3e3e39d'],
    ['clé', '51cbcf30514d0802eb5c60a018f384ea3fb9b69307c554ee63ecb43177594de4'], // UTF-8 bytes, not UTF-16
  ])('hashes %j to its SHA-256 hex', (key, hex) => {
    expect(hashApiKey(key)).toBe(hex);
  });
});

describe('API key generation', () => {
  it('makes prefixed base64url keys carrying 256 random bits', () => {
    const key = generateApiKey();
    expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
    const secret = key.slice(API_KEY_PREFIX.length);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
  });

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
    expect(keys.size).toBe(1000);
  });
});
