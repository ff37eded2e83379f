import { describe, expect, it } from 'vitest';
import { bracketCount, exceedsDepth, jsonDepth, textJsonDepth } from '../src/json-depth.js';

describe('textJsonDepth', () => {
  it.each([
    ['1', 0],
    ['"s"', 0],
    ['{}', 1],
    ['[]', 1],
    ['{"a":{"b":[]}}', 3],
    ['{"a":"[[[[{{{{"}', 1],
    ['{"a":"\\\\"}', 1],
    ['{"a":"\\"[[["}', 1],
    ['{"shallow":{},"deep":{"x":{"y":[]}}}', 4],
  ])('%s has depth %i', (text, depth) => {
    expect(textJsonDepth(text)).toBe(depth);
    expect(jsonDepth(JSON.parse(text))).toBe(depth);
  });

  it('stops once past the limit, without building anything', () => {
    expect(textJsonDepth('['.repeat(1_000_000), 256)).toBe(257);
  });
});

describe('exceedsDepth', () => {
  it('answers from the bracket count when it cannot be deep, and walks the text otherwise', () => {
    expect(bracketCount('{"a":[1,{"b":2}]}', 10)).toBe(3);
    // Counting stops past the limit.
    expect(bracketCount('['.repeat(1000), 5)).toBe(6);
    expect(exceedsDepth('{"a":[1,{"b":2}]}', 3)).toBe(false);
    expect(exceedsDepth('{"a":[1,{"b":2}]}', 2)).toBe(true);
    // Many brackets, shallow: the walk says no.
    const wide = JSON.stringify(Array.from({ length: 100 }, () => ({ a: [1] })));
    expect(bracketCount(wide, 10)).toBeGreaterThan(10);
    expect(exceedsDepth(wide, 3)).toBe(false);
    expect(exceedsDepth(wide, 2)).toBe(true);
    // Brackets inside strings make the count an upper bound only.
    expect(exceedsDepth(JSON.stringify({ s: '[[[[[[[[' }), 2)).toBe(false);
  });
});
