import { describe, expect, it } from 'vitest';
import { jsonDepth, textJsonDepth } from '../src/json-depth.js';

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
