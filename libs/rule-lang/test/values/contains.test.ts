import { describe, expect, it } from 'vitest';
import { compileContainsWord, containsValue, containsWord } from '../../src/values/index.js';

/** containsWord and its compiled form must agree. */
function cw(h: string, n: string): boolean {
  const r = containsWord(h, n);
  expect(compileContainsWord(n)(h), `compiled ${JSON.stringify(h)} / ${JSON.stringify(n)}`).toBe(r);
  return r;
}

describe('containsWord (§7.3.6 [D-contains-boundary])', () => {
  it('the spec examples', () => {
    expect(cw('Fragile: glass inside', 'glass')).toBe(true);
    expect(cw('fibreglass panel', 'glass')).toBe(false);
    expect(cw('contact: ops@harbour.example', '@harbour.example')).toBe(true);
    expect(cw('GLASS', 'glass')).toBe(true);
    expect(cw('bob@ex.com', '@ex.com')).toBe(true);
  });

  it('is case-insensitive in both directions', () => {
    expect(cw('glass', 'GLASS')).toBe(true);
    expect(cw('Fragile Glass', 'gLaSs')).toBe(true);
    expect(cw('ÉCOLE primaire', 'école')).toBe(true);
  });

  it('needs a boundary at letter/digit edges of the needle', () => {
    expect(cw('glasses', 'glass')).toBe(false);
    expect(cw('glass2', 'glass')).toBe(false);
    expect(cw('2glass', 'glass')).toBe(false);
    expect(cw('glass_x', 'glass')).toBe(true); // '_' is neither letter nor digit
    expect(cw('glass-x', 'glass')).toBe(true);
    expect(cw('(glass)', 'glass')).toBe(true);
    expect(cw('glass.', 'glass')).toBe(true);
    expect(cw('order 12345', '123')).toBe(false);
    expect(cw('order 123', '123')).toBe(true);
    expect(cw('v1.2.3', '1.2')).toBe(false); // 'v' before the match
    expect(cw('v 1.2.3', '1.2')).toBe(true); // ' ' before and '.' after: both are boundaries
  });

  it('needs no boundary next to punctuation ends of the needle', () => {
    expect(cw('x@harbour.example', '@harbour.example')).toBe(true);
    expect(cw('ops@harbour.examples', '@harbour.example')).toBe(false); // last char 'e' is a letter
    expect(cw('price:$5', ':$')).toBe(true);
    expect(cw('a-b', '-')).toBe(true);
    expect(cw('#tag', '#tag')).toBe(true);
    expect(cw('x#tagged', '#tag')).toBe(false);
    expect(cw('x#tag', '#tag')).toBe(true);
  });

  it('tries every occurrence, not just the first', () => {
    expect(cw('fibreglass and glass', 'glass')).toBe(true);
    expect(cw('glassglass glass', 'glass')).toBe(true);
    expect(cw('glassglass', 'glass')).toBe(false);
    expect(cw('aaa', 'aa')).toBe(false);
    expect(cw('aa aaa', 'aa')).toBe(true);
  });

  it('matches phrases with spaces', () => {
    expect(cw('handle with care please', 'with care')).toBe(true);
    expect(cw('handle withcare', 'with care')).toBe(false);
    expect(cw('forth with care', 'th with')).toBe(false);
  });

  it('an empty needle matches, also in an empty haystack', () => {
    expect(cw('anything', '')).toBe(true);
    expect(cw('', '')).toBe(true);
    expect(cw('', 'a')).toBe(false);
  });

  it('uses Unicode letters and numbers for boundaries', () => {
    expect(cw('Glasfaser', 'glas')).toBe(false);
    expect(cw('églass', 'glass')).toBe(false); // é is a letter
    expect(cw('glassé', 'glass')).toBe(false);
    expect(cw('日本glass', 'glass')).toBe(false);
    expect(cw('٣glass', 'glass')).toBe(false); // Arabic-Indic digit (Nd)
    expect(cw('Ⅻglass', 'glass')).toBe(false); // Roman numeral (Nl)
    expect(cw('²glass', 'glass')).toBe(false); // superscript two (No)
    expect(cw('•glass•', 'glass')).toBe(true);
    expect(cw('\u00a0glass\u3000', 'glass')).toBe(true);
    expect(cw('𝐀glass', 'glass')).toBe(false); // astral letter (surrogate pair) before
    expect(cw('glass𝐀', 'glass')).toBe(false); // astral letter after
    expect(cw('😀glass😀', 'glass')).toBe(true); // astral non-letter
    expect(cw('x 𝐀𝐁 y', '𝐀𝐁')).toBe(true);
    expect(cw('x𝐀𝐁 y', '𝐀𝐁')).toBe(false);
    expect(cw('straße', 'STRASSE')).toBe(false); // lower-casing, not full case folding
    expect(cw('ΟΔΟΣ', 'οδος')).toBe(true); // final sigma ς and σ fold together
    expect(cw('ΟΔΟΣ ΚΑΙ', 'οδοσ')).toBe(true);
    expect(cw('İstanbul', 'istanbul')).toBe(true); // İ lower-cases to i + U+0307; index-aligned fold
    expect(cw('İstanbul', 'stanbul')).toBe(false); // İ is a letter before the match
    expect(cw('Go to İzmir now', 'izmir')).toBe(true);
  });
});

describe('containsValue (§7.3.6)', () => {
  it('left array: some element loosely equal to the right side', () => {
    expect(containsValue(['ICU', 'Cardio'], 'icu')).toBe(true);
    expect(containsValue(['ICU', 'Cardio'], 'ward')).toBe(false);
    expect(containsValue([1, 2, 3], '2')).toBe(true);
    expect(containsValue(['7.50'], 7.5)).toBe(true);
    expect(containsValue(['true'], true)).toBe(true);
    expect(containsValue(['2024-03-01T22:00:00Z'], '2024-03-01')).toBe(true);
    expect(containsValue(['intensive care'], 'care')).toBe(false); // element equality, not word search
    expect(containsValue([], 'x')).toBe(false);
    expect(containsValue([null], null)).toBe(false);
    expect(containsValue([['a']], ['a'])).toBe(true); // rule 2 between an element and a list
  });

  it('both strings: whole-word match', () => {
    expect(containsValue('Fragile: glass inside', 'glass')).toBe(true);
    expect(containsValue('fibreglass panel', 'glass')).toBe(false);
    expect(containsValue('anything', '')).toBe(true);
  });

  it('any other combination → false', () => {
    expect(containsValue('order 42', 42)).toBe(false);
    expect(containsValue(42, '4')).toBe(false);
    expect(containsValue(12345, 123)).toBe(false);
    expect(containsValue({ a: 'glass' }, 'glass')).toBe(false);
    expect(containsValue(null, 'x')).toBe(false);
    expect(containsValue('null', null)).toBe(false);
    expect(containsValue('true', true)).toBe(false);
    expect(containsValue(undefined, 'x')).toBe(false);
  });
});
