import { describe, expect, it } from 'vitest';
import { findSchemaLoop } from '../src/json-schema-loops.js';
import { CreatePolicyBody } from '../src/registry.js';

describe('findSchemaLoop', () => {
  it.each([
    ['a reference to itself', { $ref: '#' }, ['#', '#']],
    ['through allOf', { allOf: [{ $ref: '#' }] }, ['#', '#/allOf/0', '#']],
    [
      'through not, if/then/else, anyOf and oneOf',
      { type: 'object', if: { const: 5 }, then: { oneOf: [{ $ref: '#' }] } },
      ['#', '#/then', '#/then/oneOf/0', '#'],
    ],
    [
      'between two definitions',
      { $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' },
      ['#/$defs/a', '#/$defs/b', '#/$defs/a'],
    ],
    ['by $id', { $id: 'https://example.com/s', anyOf: [{ $ref: 'https://example.com/s' }] }, ['#', '#/anyOf/0', '#']],
    [
      'by $anchor',
      { $defs: { a: { $anchor: 'here', not: { $ref: '#here' } } }, $ref: '#here' },
      ['#/$defs/a', '#/$defs/a/not', '#/$defs/a'],
    ],
    ['by $dynamicRef', { $dynamicAnchor: 'meta', $dynamicRef: '#meta' }, ['#', '#']],
    [
      'by a draft-07 `definitions` and `dependencies`',
      { definitions: { d: { dependencies: { x: { $ref: '#' } } } }, $ref: '#/definitions/d' },
      ['#', '#/definitions/d', '#/definitions/d/dependencies/x', '#'],
    ],
  ])('finds a loop %s', (_what, schema, loop) => {
    expect(findSchemaLoop(schema)).toEqual(loop);
  });

  it.each([
    ['a plain schema', { type: 'object', properties: { age: { type: 'integer' } } }],
    [
      'a tree through properties',
      { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } },
    ],
    [
      'recursion through additionalProperties and definitions',
      { $defs: { n: { additionalProperties: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' },
    ],
    ['recursion through propertyNames', { propertyNames: { $ref: '#' } }],
    ['a reference elsewhere (ajv refuses it, this is not a loop)', { $ref: 'https://example.com/other' }],
    ['a reference to a missing definition', { $ref: '#/$defs/none' }],
    ['booleans', { allOf: [true, false], properties: { a: true } }],
  ])('finds none in %s', (_what, schema) => {
    expect(findSchemaLoop(schema)).toBeNull();
  });

  it('walks a deeply nested schema without recursion', () => {
    let schema: Record<string, unknown> = { $anchor: 'deep', not: { $ref: '#deep' } };
    for (let i = 0; i < 5000; i++) schema = { properties: { a: schema } };
    const loop = findSchemaLoop(schema);
    expect(loop).toHaveLength(3);
    expect(loop?.[0]).toBe(`#${'/properties/a'.repeat(5000)}`);
    expect(loop?.[1]).toBe(`#${'/properties/a'.repeat(5000)}/not`);
  });
});

describe('saved schemas', () => {
  it('refuse a loop with reason `schema_loop` and accept recursive trees', () => {
    const bad = CreatePolicyBody.safeParse({ name: 'p', rule: 'x', schema: { $ref: '#' } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({ path: ['schema'], params: { reason: 'schema_loop' } });
    expect(CreatePolicyBody.safeParse({ name: 'p', rule: 'x', schema: { properties: { a: { $ref: '#' } } } }).success).toBe(true);
    expect(CreatePolicyBody.safeParse({ name: 'p', rule: 'x', schema: null }).success).toBe(true);
  });
});
