import { describe, expect, it } from 'vitest';
import { booleanLike, compileIsIn, compileLooseEquals, isEmptyValue, isIn, looseEquals, strictEquals } from '../../src/values/index.js';

/** Loose equality is symmetric: check both orders every time. */
function loose(a: unknown, b: unknown): boolean {
  const r = looseEquals(a, b);
  expect(looseEquals(b, a), `symmetry of ${JSON.stringify(a)} / ${JSON.stringify(b)}`).toBe(r);
  return r;
}

describe('looseEquals (§7.3.2 [D-loose-equality])', () => {
  it('rule 1: null or an object on either side → false', () => {
    expect(loose(null, null)).toBe(false);
    expect(loose(null, 'null')).toBe(false);
    expect(loose(null, '')).toBe(false);
    expect(loose(null, 0)).toBe(false);
    expect(loose(null, false)).toBe(false);
    expect(loose({}, {})).toBe(false);
    expect(loose({ a: 1 }, { a: 1 })).toBe(false);
    expect(loose({}, '[object Object]')).toBe(false);
    expect(loose({}, [])).toBe(false); // rule 1 before rule 2
    expect(loose([null], [null])).toBe(false); // elements compared loosely: null never equal
    expect(loose([{}], [{}])).toBe(false);
  });

  it('rule 2: lists compare pairwise, in order, same length', () => {
    expect(loose([], [])).toBe(true);
    expect(loose(['Gold', 42, true], ['gold', '42', 'TRUE'])).toBe(true);
    expect(loose([1, 2], [2, 1])).toBe(false);
    expect(loose([1, 2], [1, 2, 3])).toBe(false);
    expect(loose([1], 1)).toBe(false);
    expect(loose(['a'], 'a')).toBe(false);
    expect(loose([], '')).toBe(false);
    expect(loose([[1, '2']], [['1', 2]])).toBe(true); // nested arrays from data
    expect(loose(['2024-03-01T22:00:00Z'], ['2024-03-01'])).toBe(true);
  });

  it('rule 3: booleans against boolean-likes', () => {
    expect(loose(true, true)).toBe(true);
    expect(loose(false, false)).toBe(true);
    expect(loose(true, false)).toBe(false);
    expect(loose(true, 'true')).toBe(true);
    expect(loose(true, 'TRUE')).toBe(true);
    expect(loose(true, 'True')).toBe(true);
    expect(loose(false, 'fAlSe')).toBe(true);
    expect(loose(true, 'false')).toBe(false);
    expect(loose(false, 'true')).toBe(false);
    expect(loose(true, 1)).toBe(false);
    expect(loose(false, 0)).toBe(false);
    expect(loose(true, '1')).toBe(false);
    expect(loose(true, 'yes')).toBe(false);
    expect(loose(true, ' true')).toBe(false);
    expect(loose(false, '')).toBe(false);
  });

  it('rule 3 applies only when a side is an actual boolean; two strings use rule 6', () => {
    expect(loose('true', 'TRUE')).toBe(true);
    expect(loose('true', 'false')).toBe(false);
  });

  it('rule 4: numeric on both sides → numeric equality', () => {
    expect(loose('42', 42)).toBe(true);
    expect(loose('7.50', 7.5)).toBe(true);
    expect(loose('7.50', '7.5')).toBe(true); // rule 4 before rule 6
    expect(loose('007', 7)).toBe(true);
    expect(loose('-0', 0)).toBe(true);
    expect(loose(1, 1.0)).toBe(true);
    expect(loose(0.1 + 0.2, 0.3)).toBe(false); // IEEE doubles
    expect(loose('42', 43)).toBe(false);
    expect(loose(' 42', 42)).toBe(false);
    expect(loose('42.', 42)).toBe(false);
    expect(loose('1e3', 1000)).toBe(false);
    expect(loose('+5', 5)).toBe(false);
    expect(loose('abc', 30)).toBe(false);
  });

  it('rule 5: date-like on both sides → same day', () => {
    expect(loose('2024-03-01T22:00:00Z', '2024-03-01')).toBe(true);
    expect(loose('2024-03-01T23:30:00-02:00', '2024-03-02')).toBe(true);
    expect(loose('2024-03-01T23:30:00-02:00', '2024-03-01')).toBe(false);
    expect(loose('2024-03-01t10:00z', '2024-03-01T23:59:59.999')).toBe(true);
    expect(loose('2024-03-01', '2024-03-02')).toBe(false);
    expect(loose('2024-03-01', 20240301)).toBe(false); // a number is never date-like
    expect(loose('2024-03-01', '2024-3-1')).toBe(false); // not date-like: rule 6, different text
  });

  it('rule 6: strings equal after lower-casing, no trimming', () => {
    expect(loose('Gold', 'gold')).toBe(true);
    expect(loose('GOLD', 'gold')).toBe(true);
    expect(loose('ÉCOLE', 'école')).toBe(true);
    expect(loose('gold', 'gold ')).toBe(false);
    expect(loose(' gold', 'gold')).toBe(false);
    expect(loose('', '')).toBe(true);
    expect(loose('gold', 'silver')).toBe(false);
    expect(loose('2023-02-29', '2023-02-29')).toBe(true); // not date-like, but equal text
    expect(loose('2023-02-29', '2023-02-28')).toBe(false);
  });

  it('rule 7: other combinations → false', () => {
    expect(loose(42, 'forty-two')).toBe(false);
    expect(loose(undefined, undefined)).toBe(false);
    expect(loose(undefined, '')).toBe(false);
    expect(loose(42, '2024-03-01')).toBe(false);
  });
});

describe('compileLooseEquals', () => {
  const samples: unknown[] = [
    null,
    undefined,
    {},
    { a: 1 },
    [],
    [1],
    ['42'],
    [null],
    true,
    false,
    'true',
    'TRUE',
    'False',
    'yes',
    '',
    0,
    1,
    42,
    7.5,
    -0,
    20240301,
    '0',
    '42',
    '042',
    '7.50',
    '7.5',
    '-0',
    'abc',
    'ABC',
    'Gold',
    'gold',
    'GOLD ',
    '2024-03-01',
    '2024-03-01T22:00:00Z',
    '2024-03-01T23:30:00-02:00',
    '2024-03-02',
    '2023-02-29',
    'İ',
    'i',
  ];
  it('agrees with looseEquals(v, literal) for every pair of samples', () => {
    for (const lit of samples) {
      const f = compileLooseEquals(lit);
      for (const v of samples) expect(f(v), `${JSON.stringify(v)} vs literal ${JSON.stringify(lit)}`).toBe(looseEquals(v, lit));
    }
  });
});

describe('booleanLike', () => {
  it('maps booleans and "true"/"false" in any case', () => {
    expect([true, false, 'true', 'TRUE', 'false', 'FaLsE'].map(booleanLike)).toEqual([1, 0, 1, 1, 0, 0]);
    expect([1, 0, 'yes', 'no', 'truee', 'fals', '', null, undefined, ['true']].map(booleanLike)).toEqual([
      -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    ]);
  });
});

describe('strictEquals (§7.3.3)', () => {
  it('numbers: numerically equal (1 and 1.0 are the same JSON number)', () => {
    expect(strictEquals(1, 1.0)).toBe(true);
    expect(strictEquals(0, -0)).toBe(true);
    expect(strictEquals(1, 2)).toBe(false);
    expect(strictEquals(NaN, NaN)).toBe(false);
  });
  it('strings: identical, case-sensitive', () => {
    expect(strictEquals('gold', 'gold')).toBe(true);
    expect(strictEquals('Gold', 'gold')).toBe(false);
    expect(strictEquals('gold ', 'gold')).toBe(false);
  });
  it('booleans: identical', () => {
    expect(strictEquals(true, true)).toBe(true);
    expect(strictEquals(false, true)).toBe(false);
  });
  it('no conversions between kinds', () => {
    expect(strictEquals(42, '42')).toBe(false);
    expect(strictEquals(true, 'true')).toBe(false);
    expect(strictEquals(7.5, '7.50')).toBe(false);
    expect(strictEquals(0, false)).toBe(false);
    expect(strictEquals('', null)).toBe(false);
    expect(strictEquals([], {})).toBe(false);
    expect(strictEquals(null, {})).toBe(false);
    expect(strictEquals(undefined, undefined)).toBe(false);
  });
  it('a date literal (as its text) is exactly only that text', () => {
    expect(strictEquals('2024-03-01', '2024-03-01')).toBe(true);
    expect(strictEquals('2024-03-01T00:00:00Z', '2024-03-01')).toBe(false);
  });
  it('lists and arrays: same length, pairwise exactly equal', () => {
    expect(strictEquals([], [])).toBe(true);
    expect(strictEquals([1, 'a', true], [1.0, 'a', true])).toBe(true);
    expect(strictEquals([1, 'a'], [1, 'A'])).toBe(false);
    expect(strictEquals([1, 2], [2, 1])).toBe(false);
    expect(strictEquals([1], [1, 1])).toBe(false);
  });
  it('paths: deep JSON equality', () => {
    expect(strictEquals(null, null)).toBe(true);
    expect(strictEquals({}, {})).toBe(true);
    expect(strictEquals({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 })).toBe(true);
    expect(strictEquals({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(strictEquals({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(strictEquals({ a: 1, b: undefined }, { a: 1, c: undefined })).toBe(false);
    expect(strictEquals({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(strictEquals({ a: '1' }, { a: 1 })).toBe(false);
    expect(strictEquals([{ x: null }], [{ x: null }])).toBe(true);
    expect(strictEquals({ 0: 'a' }, ['a'])).toBe(false);
    expect(strictEquals(JSON.parse('{"__proto__": 1}'), {})).toBe(false);
    expect(strictEquals(JSON.parse('{"__proto__": 1}'), JSON.parse('{"__proto__": 1}'))).toBe(true);
  });
});

describe('isEmptyValue (§7.3.7 [D-empty-missing])', () => {
  it.each([[''], [[]], [{}], [null], [undefined]])('%j is empty', (v) => {
    expect(isEmptyValue(v)).toBe(true);
  });
  it.each([[' '], ['0'], ['null'], [0], [-0], [false], [true], [NaN], [[null]], [['']], [{ a: null }], [{ a: undefined }]])(
    '%j is not empty',
    (v) => {
      expect(isEmptyValue(v)).toBe(false);
    },
  );
});

describe('isIn (§7.3.5)', () => {
  it('true when the list has a loosely equal element', () => {
    expect(isIn('gold', ['silver', 'Gold'])).toBe(true);
    expect(isIn(42, ['41', '42'])).toBe(true);
    expect(isIn('7.50', [7.5])).toBe(true);
    expect(isIn(true, ['TRUE'])).toBe(true);
    expect(isIn('2024-03-01T22:00:00Z', ['2024-03-01'])).toBe(true);
  });
  it('false otherwise', () => {
    expect(isIn('x', [])).toBe(false);
    expect(isIn('bronze', ['silver', 'gold'])).toBe(false);
    expect(isIn(null, [null])).toBe(false);
    expect(isIn({}, [{}])).toBe(false);
  });
  it('right side not an array, or left side an array → false', () => {
    expect(isIn('gold', 'gold')).toBe(false);
    expect(isIn('gold', 'golden')).toBe(false);
    expect(isIn('a', { a: 1 })).toBe(false);
    expect(isIn('a', null)).toBe(false);
    expect(isIn(['a'], [['a']])).toBe(false);
    expect(isIn(['a'], ['a'])).toBe(false);
  });
  it('compileIsIn agrees with isIn', () => {
    const lists: unknown[][] = [[], ['silver', 'Gold'], [41, '42', true], ['2024-03-01', 7.5], [null, {}]];
    const values: unknown[] = ['gold', 'GOLD', 42, '42', 'true', true, false, '2024-03-01T22:00:00Z', '7.50', null, {}, ['gold'], 'x'];
    for (const list of lists) {
      const f = compileIsIn(list);
      for (const v of values) expect(f(v), `${JSON.stringify(v)} in ${JSON.stringify(list)}`).toBe(isIn(v, list));
    }
  });
});

describe('equality on in-memory values that share or cycle', () => {
  /** 60 levels, each sharing one child twice: 2^60 paths if walked as a tree. */
  function shared(depth: number): unknown {
    let v: unknown = [1];
    for (let i = 0; i < depth; i++) v = { a: v, b: v, list: [v, v] };
    return v;
  }

  it('compares shared sub-values in time linear in the distinct values', () => {
    expect(strictEquals(shared(60), shared(60))).toBe(true);
    expect(strictEquals(shared(60), shared(59))).toBe(false);
    let x: unknown = [1];
    let y: unknown = [1];
    for (let i = 0; i < 60; i++) {
      x = [x, x];
      y = [y, y];
    }
    expect(looseEquals(x, y)).toBe(true);
  });

  it('terminates on cycles', () => {
    const a: Record<string, unknown> = { k: 1 };
    a.self = a;
    const b: Record<string, unknown> = { k: 1 };
    b.self = b;
    expect(strictEquals(a, b)).toBe(true);
    const l: unknown[] = [1];
    l.push(l);
    const m: unknown[] = [1];
    m.push(m);
    expect(looseEquals(l, m)).toBe(true);
  });
});
