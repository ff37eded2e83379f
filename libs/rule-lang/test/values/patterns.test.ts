import { describe, expect, it } from 'vitest';
import { compilePattern } from '../../src/values/index.js';
import { countedReads } from '../support/counted-reads.js';

function tester(source: string): (s: string) => boolean {
  const r = compilePattern(source);
  if (!r.ok) throw new Error(`pattern ${source} did not compile: ${r.message}`);
  return r.test;
}

function message(source: string): string {
  const r = compilePattern(source);
  if (r.ok) throw new Error(`pattern ${source} compiled`);
  return r.message;
}

describe('compilePattern (§7.3.12 [D-pattern-semantics])', () => {
  it('is an unanchored search', () => {
    const t = tester('\\d{4}');
    expect(t('ref 2024 x')).toBe(true);
    expect(t('12345')).toBe(true);
    expect(t('123')).toBe(false);
    expect(tester('glass')('fibreglass panel')).toBe(true);
    expect(tester('')('anything')).toBe(true);
  });

  it('^ and $ anchor to the whole string', () => {
    const t = tester('^\\d{4}$');
    expect(t('2024')).toBe(true);
    expect(t('12345')).toBe(false);
    expect(t('2024\n')).toBe(false);
    expect(t('x2024')).toBe(false);
    const postcode = tester('^[A-Z]{2}\\d+$');
    expect(postcode('AB123')).toBe(true);
    expect(postcode('ab123')).toBe(false);
    expect(postcode('AB123x')).toBe(false);
  });

  it('is case-sensitive unless (?i)', () => {
    expect(tester('gold')('GOLD')).toBe(false);
    expect(tester('(?i)gold')('GOLD')).toBe(true);
    expect(tester('(?i)^gold$')('GoLd')).toBe(true);
    expect(tester('(?i)é')('É')).toBe(true);
    expect(tester('(?i:a)b')('Ab')).toBe(true);
    expect(tester('(?i:a)b')('AB')).toBe(false);
  });

  it('supports RE2 features: classes, Unicode properties, named groups, POSIX classes, non-greedy', () => {
    expect(tester('\\pL+')('é')).toBe(true);
    expect(tester('^\\p{Greek}+$')('αβγ')).toBe(true);
    expect(tester('(?P<year>\\d{4})-(?<m>\\d\\d)')('on 2024-03')).toBe(true);
    expect(tester('^[[:alpha:]]+$')('abc')).toBe(true);
    expect(tester('a.*?b')('axxb')).toBe(true);
    expect(tester('^.$')('😀')).toBe(true); // one code point, not two UTF-16 units
  });

  it('reads each input byte once on classic catastrophic-backtracking inputs (linear time, counted, not timed)', () => {
    const reads = (source: string, input: string) => countedReads(tester(source), input);
    for (const source of ['^(a+)+$', '(a+)+b', '(a|aa)*c', '(x+x+)+y']) {
      for (const n of [1_000, 10_000]) {
        const input = (source.includes('x') ? 'x' : 'a').repeat(n) + '!';
        const r = reads(source, input);
        expect(r.matched, source).toBe(false);
        expect(r.reads, `${source} on ${n + 1} bytes`).toBeGreaterThanOrEqual(n);
        expect(r.reads, `${source} on ${n + 1} bytes`).toBeLessThanOrEqual(n + 4);
      }
    }
    expect(reads('^(a+)+$', 'a'.repeat(10_000))).toEqual({ matched: true, reads: 10_002 });
  });

  it('rejects backreferences with an actionable message', () => {
    expect(message('(a)\\1')).toBe('backreferences such as `\\1` are not supported (RE2 syntax)');
    expect(message('(a)(b)\\2')).toBe('backreferences such as `\\2` are not supported (RE2 syntax)');
    expect(message('(?<n>a)\\k<n>')).toMatch(/^backreferences such as `\\k` are not supported/);
    expect(message('(?P<n>a)(?P=n)')).toBe('backreferences such as `(?P=name)` are not supported (RE2 syntax)');
  });

  it('rejects lookahead and lookbehind', () => {
    for (const p of ['(?=x)', 'a(?!b)', '(?<=x)a', '(?<!x)a']) {
      expect(message(p), p).toBe('lookahead and lookbehind are not supported (RE2 syntax)');
    }
  });

  it('reports the library reason for other errors, on one line, without throwing', () => {
    expect(message('(')).toBe('missing closing ): `(`');
    expect(message('a{2,1}')).toBe('invalid repeat count: `{2,1}`');
    expect(message('[z-a]')).toBe('invalid character class range: `z-a`');
    expect(message('a**')).toBe('invalid nested repetition operator: `**`');
    expect(message('x{1001}')).toMatch(/repeat count/);
    expect(message('\\Z')).toBe('invalid escape sequence: `\\Z`');
    expect(message('(?#comment)')).toMatch(/Perl syntax/);
    expect(message('a)\n(')).not.toMatch(/[\r\n]/);
    for (const p of ['[', ')', '\\', '*', '(?P<>a)', '\\p{Nope}', '(?z)']) {
      const r = compilePattern(p);
      expect(r.ok, p).toBe(false);
      if (!r.ok) expect(r.message.length, p).toBeGreaterThan(0);
    }
  });
});
