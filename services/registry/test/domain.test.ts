import { describe, expect, it } from 'vitest';
import { compileSchema } from '../src/domain/json-schema.js';
import { policyPublishProblems } from '../src/domain/policy-checks.js';
import { formatPath, missingSchemaPaths } from '../src/domain/schema-paths.js';
import { canonicalJson } from '../src/domain/hash.js';
import { decodeCursor, encodeCursor } from '../src/domain/cursor.js';
import { z } from 'zod';

describe('missingSchemaPaths', () => {
  const schema = {
    $defs: { person: { type: 'object', properties: { dateOfBirth: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } } } },
    type: 'object',
    properties: {
      applicant: { $ref: '#/$defs/person' },
      order: { allOf: [{ properties: { total: {} } }, { properties: { lines: { type: 'array', items: { properties: { qty: {} } } } } }] },
    },
  };

  it('matches written names by key candidates and follows $ref, allOf and items', () => {
    expect(missingSchemaPaths(schema, [['applicant', 'date of birth'], ['order', 'total'], ['order', 'lines', '[]', 'qty'], ['applicant', 'tags', '[]']])).toEqual([]);
  });

  it('reports where a path stops matching', () => {
    expect(missingSchemaPaths(schema, [['applicant', 'height'], ['customer'], ['order', 'lines', '[]', 'price']])).toEqual([
      { path: ['applicant', 'height'], missingAt: 1 },
      { path: ['customer'], missingAt: 0 },
      { path: ['order', 'lines', '[]', 'price'], missingAt: 3 },
    ]);
    expect(formatPath(['order', 'lines', '[]', 'price'])).toBe('order.lines[].price');
  });

  it('survives a self-referencing schema', () => {
    const loop = { $ref: '#', properties: { a: { $ref: '#' } } };
    expect(missingSchemaPaths(loop, [['a', 'a', 'a'], ['b']])).toEqual([{ path: ['b'], missingAt: 0 }]);
  });
});

describe('compileSchema', () => {
  it('uses 2020-12 by default and draft-07 by `$schema`', () => {
    expect(compileSchema({ type: 'array', prefixItems: [{ type: 'string' }] })).toMatchObject({ ok: true, dialect: '2020-12' });
    expect(compileSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toMatchObject({ ok: true, dialect: 'draft-07' });
  });

  it('refuses invalid schemas and unresolvable refs, and knows formats', () => {
    expect(compileSchema({ type: 12 })).toMatchObject({ ok: false });
    expect(compileSchema({ $ref: '#/nowhere' })).toMatchObject({ ok: false });
    const email = compileSchema({ type: 'string', format: 'email' });
    expect(email.ok && email.validate('not an email')).toBe(false);
  });
});

describe('policyPublishProblems', () => {
  it('is empty for a sound policy', () => {
    const rule = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
    expect(policyPublishProblems({ rule, schema: null, tests: [{ name: 't', data: { applicant: { age: 18 } }, expect: true }] })).toEqual([]);
  });

  it('does not run tests of a rule that does not parse', () => {
    const problems = policyPublishProblems({ rule: 'nonsense', schema: null, tests: [{ name: 't', data: {}, expect: true }] });
    expect(problems.map((p) => p.code)).toEqual(['parse_error']);
  });
});

describe('helpers', () => {
  it('canonical JSON sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
  });

  it('cursors round-trip and refuse garbage with bad_request', () => {
    expect(decodeCursor(encodeCursor({ v: 3 }), z.object({ v: z.number() }))).toEqual({ v: 3 });
    expect(() => decodeCursor('%%%', z.object({ v: z.number() }))).toThrow(expect.objectContaining({ code: 'bad_request' }));
  });
});
