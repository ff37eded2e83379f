import { describe, expect, it } from 'vitest';
import { isNumericString, toNumber } from '../../src/values/index.js';

describe('toNumber (§7.2 numeric)', () => {
  it('returns JSON numbers as they are', () => {
    expect(toNumber(42)).toBe(42);
    expect(toNumber(-0.25)).toBe(-0.25);
    expect(toNumber(1.0)).toBe(1);
    expect(toNumber(0)).toBe(0);
  });

  it.each([
    ['42', 42],
    ['7.50', 7.5],
    ['-40', -40],
    ['-0.25', -0.25],
    ['007', 7],
    ['0', 0],
    ['0.075', 0.075],
    ['123456789012345678901234567890', 1.2345678901234568e29],
  ])('converts the numeric string %j', (s, n) => {
    expect(toNumber(s)).toBe(n);
  });

  it.each([
    '',
    '-',
    '.5',
    '5.',
    '+5',
    '1e3',
    '1E3',
    '1,000',
    ' 42',
    '42 ',
    '4 2',
    '0x10',
    'Infinity',
    'NaN',
    '--1',
    '1.2.3',
    '-.5',
    'fifty',
    '٤٢' /* Arabic-Indic digits */,
    '４２' /* full-width */,
    '42\n',
  ])('is NaN for the non-numeric string %j', (s) => {
    expect(toNumber(s)).toBeNaN();
    expect(isNumericString(s)).toBe(false);
  });

  it.each([true, false, null, undefined, {}, [], [1], { n: 1 }])('is NaN for the non-number %j', (v) => {
    expect(toNumber(v)).toBeNaN();
  });

  it('agrees with the spec regex on a sample of strings', () => {
    const re = /^-?[0-9]+(\.[0-9]+)?$/;
    const samples = ['1', '-1', '1.5', '-1.5', '1.', '.1', '-', '1-', '1..2', '12.34.5', 'a1', '1a', '00.00', '-0'];
    for (const s of samples) expect(isNumericString(s), s).toBe(re.test(s));
  });
});
