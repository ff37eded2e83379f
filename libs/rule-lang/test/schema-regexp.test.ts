import { describe, expect, it } from 'vitest';
import { schemaRegExp } from '../src/index.js';
import { countedReads } from './support/counted-reads.js';

describe('schemaRegExp (ajv code.regExp)', () => {
  it('searches unanchored with RE2, in linear time (input reads counted, not timed)', () => {
    const re = schemaRegExp('^(a+)+$', 'u');
    expect(re.test(`${'a'.repeat(100_000)}!`)).toBe(false);
    const n = 10_000;
    const r = countedReads((s) => re.test(s), `${'a'.repeat(n)}!`);
    expect(r.matched).toBe(false);
    expect(r.reads).toBeGreaterThanOrEqual(n);
    expect(r.reads).toBeLessThanOrEqual(n + 4);
    expect(re.test('aaa')).toBe(true);
    expect(schemaRegExp('b+', 'u').test('abba')).toBe(true);
  });

  it('honours the i flag', () => {
    expect(schemaRegExp('^abc$', 'i').test('ABC')).toBe(true);
    expect(schemaRegExp('^abc$', 'u').test('ABC')).toBe(false);
  });

  it('gives each pattern its own key (ajv caches compiled patterns by toString)', () => {
    expect(String(schemaRegExp('a', 'u'))).not.toBe(String(schemaRegExp('b', 'u')));
  });

  it('throws an Error naming what RE2 does not support', () => {
    expect(() => schemaRegExp('(?=a)b', 'u')).toThrow('pattern `(?=a)b`: lookahead and lookbehind are not supported (RE2 syntax)');
  });
});
