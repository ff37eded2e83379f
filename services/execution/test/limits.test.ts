import { isArbiterError, jsonDepth } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { checkDataDepth, checkRuleSize } from '../src/intake/limits.js';
import { nested } from './helpers.js';

describe('checkRuleSize', () => {
  it('returns the UTF-8 size at or under the limit', () => {
    expect(checkRuleSize('abc', 3)).toBe(3);
    expect(checkRuleSize('é€', 5)).toBe(5);
  });

  it('counts UTF-8 bytes, not characters, and refuses with payload_too_large', () => {
    let error: unknown;
    try {
      checkRuleSize('€€', 5);
    } catch (err) {
      error = err;
    }
    expect(isArbiterError(error, 'payload_too_large')).toBe(true);
    expect((error as Error).message).toBe('rule text is 6 bytes: the limit is 5 bytes');
  });
});

describe('jsonDepth', () => {
  it.each([
    [1, 0],
    [null, 0],
    ['s', 0],
    [{}, 1],
    [[], 1],
    [{ a: 1, b: 'x' }, 1],
    [{ a: { b: {} } }, 3],
    [{ a: [1, [2, { c: null }]] }, 4],
    [{ shallow: {}, deep: { x: { y: [] } } }, 4],
  ])('%j has depth %i', (value, depth) => {
    expect(jsonDepth(value)).toBe(depth);
  });

  it('stops once past the limit', () => {
    expect(jsonDepth(nested(10_000), 64)).toBe(65);
  });
});

describe('checkDataDepth', () => {
  it('accepts data exactly at the limit', () => {
    expect(() => checkDataDepth(nested(64), 64)).not.toThrow();
  });

  it('refuses deeper data with validation_failed', () => {
    let error: unknown;
    try {
      checkDataDepth(nested(65), 64);
    } catch (err) {
      error = err;
    }
    expect(isArbiterError(error, 'validation_failed')).toBe(true);
    expect((error as Error).message).toBe('data is nested deeper than 64 levels');
  });
});
