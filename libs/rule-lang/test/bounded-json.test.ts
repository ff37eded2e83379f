import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedJson } from '../src/trace/bounded-json.js';

describe('boundedJson', () => {
  it('is exactly JSON.stringify while the text fits', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const json = JSON.stringify(v);
        if (json.length <= 240) expect(boundedJson(v)).toBe(json);
        else expect(boundedJson(v)).toBe(`${json.slice(0, 240)}…`);
      }),
      { numRuns: 500 },
    );
    expect(boundedJson({ a: undefined, b: [undefined, 1], d: new Date(0) })).toBe(
      JSON.stringify({ a: undefined, b: [undefined, 1], d: new Date(0) }),
    );
  });

  it('stops early on shared, cyclic and deep values', () => {
    let shared: unknown = [1];
    for (let i = 0; i < 200; i++) shared = { a: shared, b: [shared, shared] };
    expect(boundedJson(shared, 100)).toHaveLength(101);
    const cyclic: Record<string, unknown> = { k: 1 };
    cyclic.self = cyclic;
    expect(boundedJson(cyclic, 50).endsWith('…')).toBe(true);
    const deep = JSON.parse(`${'['.repeat(50_000)}1${']'.repeat(50_000)}`) as unknown;
    expect(boundedJson(deep)).toBe(`${'['.repeat(240)}…`);
    expect(boundedJson('x'.repeat(10_000))).toBe(`"${'x'.repeat(239)}…`);
  });
});

describe('trace lines of in-memory values that share sub-values', () => {
  it('stay short', async () => {
    const { compile } = await import('../src/index.js');
    let v: unknown = 1;
    for (let i = 0; i < 200; i++) v = { a: v, items: [v] };
    const policy = compile('if x.a is not empty and x.items is not empty -> ok.');
    const r = policy.evaluate({ x: v }, { trace: true });
    expect(r.result).toBe(true);
    expect(Math.max(...r.trace.map((l) => l.length))).toBeLessThan(400);
  });
});
