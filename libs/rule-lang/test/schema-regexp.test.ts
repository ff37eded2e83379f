import { describe, expect, it } from 'vitest';
import { schemaRegExp } from '../src/index.js';

describe('schemaRegExp (ajv code.regExp)', () => {
  it('searches unanchored with RE2, in linear time', () => {
    const re = schemaRegExp('^(a+)+$', 'u');
    const started = performance.now();
    expect(re.test(`${'a'.repeat(100_000)}!`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
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
