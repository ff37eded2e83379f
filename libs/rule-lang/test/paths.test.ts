import { describe, expect, it } from 'vitest';
import { compile } from '../src/index.js';

describe('path lookups only see own keys of JSON objects', () => {
  it.each(['map', 'filter', 'length', 'constructor', 'toString', '0'])('`%s` on an array is absent', (key) => {
    const policy = compile(`A **x** is ok if the __${key}__ of the **list** is empty.`);
    expect(policy.evaluate({ list: [1, 2] }).result).toBe(true);
    const strict = compile(`A **x** is ok if the __${key}__ of the **list** is "y".`);
    expect(strict.evaluate({ list: [1, 2] })).toMatchObject({ result: false, errorCode: 'missing_property' });
  });

  it('finds own keys named like prototype members on objects', () => {
    const policy = compile('A **x** is ok if the __map__ of the **obj** is "here" and the __constructor__ of the **obj** is 1.');
    expect(policy.evaluate({ obj: { map: 'here', constructor: 1 } }).result).toBe(true);
  });
});
