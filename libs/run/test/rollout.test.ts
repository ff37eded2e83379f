import { describe, expect, it } from 'vitest';
import { canonicalJson, rolloutBucket, rolloutChoosesNew, rolloutThreshold, valueAtPath } from '../src/index.js';

describe('rollout choice', () => {
  it('reads dotted paths through objects and arrays', () => {
    const data = { customer: { id: 'c-1', tags: ['a', 'b'] }, 'x.y': 1 };
    expect(valueAtPath(data, 'customer.id')).toBe('c-1');
    expect(valueAtPath(data, 'customer.tags.1')).toBe('b');
    expect(valueAtPath(data, 'customer.tags.01')).toBeUndefined();
    expect(valueAtPath(data, 'customer.missing')).toBeUndefined();
    expect(valueAtPath(data, 'customer.id.length')).toBeUndefined();
    expect(valueAtPath({ a: { toString: 1 } }, 'a.constructor')).toBeUndefined();
  });

  it('hashes equal values alike whatever their key order', () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 'x' }] })).toBe('{"a":[1,{"c":"x","d":2}],"b":1}');
    expect(rolloutBucket({ b: 1, a: 2 })).toBe(rolloutBucket({ a: 2, b: 1 }));
    expect(rolloutBucket('c-1')).not.toBe(rolloutBucket(1));
    // Fixed numbers: the service and every SDK must agree with these forever.
    expect([rolloutBucket('c-1'), rolloutBucket(42), rolloutBucket({ id: 7 })]).toEqual([4534, 6589, 3995]);
  });

  it('sends the same value to the same version, and the share asked for', () => {
    const split = { percent: 10, by: 'customer.id' };
    let chosen = 0;
    for (let i = 0; i < 10_000; i++) {
      const data = { customer: { id: `customer-${i}` } };
      const a = rolloutChoosesNew(split, data, () => 0);
      expect(rolloutChoosesNew(split, data, () => 0.999)).toBe(a);
      if (a) chosen++;
    }
    expect(chosen / 10_000).toBeGreaterThan(0.09);
    expect(chosen / 10_000).toBeLessThan(0.11);
  });

  it('draws per run without `by` or without a value there', () => {
    expect(rolloutChoosesNew({ percent: 10 }, {}, () => 0.05)).toBe(true);
    expect(rolloutChoosesNew({ percent: 10 }, {}, () => 0.1)).toBe(false);
    expect(rolloutChoosesNew({ percent: 10, by: 'customer.id' }, { customer: null }, () => 0.0999)).toBe(true);
    expect(rolloutChoosesNew({ percent: 10, by: 'customer.id' }, { customer: { id: null } }, () => 0.5)).toBe(false);
  });

  it('never draws at 0 % and 100 %, and counts hundredths', () => {
    expect(rolloutChoosesNew({ percent: 0 }, {}, () => 0)).toBe(false);
    expect(rolloutChoosesNew({ percent: 100 }, {}, () => 0.99999)).toBe(true);
    expect(rolloutThreshold(0.01)).toBe(1);
    expect(rolloutThreshold(10.07)).toBe(1007);
  });
});

describe('rollout bucket bytes', () => {
  it('hashes the UTF-8 bytes TextEncoder writes, lone surrogates as U+FFFD', () => {
    const fnv = (text: string) => {
      let h = 0x811c9dc5;
      for (const b of new TextEncoder().encode(text)) h = Math.imul(h ^ b, 0x01000193);
      h ^= h >>> 16;
      h = Math.imul(h, 0x85ebca6b);
      h ^= h >>> 13;
      h = Math.imul(h, 0xc2b2ae35);
      h ^= h >>> 16;
      return (h >>> 0) % 10_000;
    };
    for (const v of ['c-1', '', 'é', 'Zoë €', '😀 x', '\ud800', 'a\udc00b', 'say "hi"', 'tab\t', 'back\\slash', { k: 'ü' }, 42, null])
      expect(rolloutBucket(v), JSON.stringify(v)).toBe(fnv(canonicalJson(v)));
  });
});
