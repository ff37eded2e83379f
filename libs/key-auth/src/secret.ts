import { createHash, randomBytes } from 'node:crypto';

/** Prefix of every generated key, so leaked keys are easy to recognise and scan for. */
export const API_KEY_PREFIX = 'arb_';

/** A new random API key: the prefix and 256 random bits in base64url. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * The stored form of a key: lowercase hex SHA-256 of its UTF-8 text. Keys carry at least 128
 * random bits, so a fast unsalted hash is enough (no dictionary to attack) and allows lookup by hash.
 */
export function hashApiKey(key: string): string {
  let hash = recentHashes.get(key);
  if (hash === undefined) {
    hash = createHash('sha256').update(key, 'utf8').digest('hex');
    // Bounded: keys in use are few; a flood of distinct (mostly unknown) keys just clears it.
    if (recentHashes.size >= RECENT_HASHES_MAX) recentHashes.clear();
    recentHashes.set(key, hash);
  }
  return hash;
}

/** Hashes of the keys sent lately: every request of a key in use hashes it, one sha256 is enough. */
const recentHashes = new Map<string, string>();
const RECENT_HASHES_MAX = 1000;
