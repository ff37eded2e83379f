import { describe, expect, it } from 'vitest';
import { compileSchema } from '../src/domain/json-schema.js';
import { policyPublishProblems } from '../src/domain/policy-checks.js';
import { formatPath, missingSchemaPaths } from '../src/domain/schema-paths.js';
import { canonicalJson } from '../src/domain/hash.js';

describe('missingSchemaPaths', () => {
  const schema = {
    $defs: {
      person: { type: 'object', properties: { dateOfBirth: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } } },
    },
    type: 'object',
    properties: {
      applicant: { $ref: '#/$defs/person' },
      order: { allOf: [{ properties: { total: {} } }, { properties: { lines: { type: 'array', items: { properties: { qty: {} } } } } }] },
    },
  };

  it('matches written names by key candidates and follows $ref, allOf and items', () => {
    expect(
      missingSchemaPaths(schema, [
        ['applicant', 'date of birth'],
        ['order', 'total'],
        ['order', 'lines', '[]', 'qty'],
        ['applicant', 'tags', '[]'],
      ]),
    ).toEqual([]);
  });

  it('reports where a path stops matching', () => {
    expect(missingSchemaPaths(schema, [['applicant', 'height'], ['customer'], ['order', 'lines', '[]', 'price']])).toEqual([
      { path: ['applicant', 'height'], missingAt: 1 },
      { path: ['customer'], missingAt: 0 },
      { path: ['order', 'lines', '[]', 'price'], missingAt: 3 },
    ]);
    expect(formatPath(['order', 'lines', '[]', 'price'])).toBe('order.lines[].price');
  });

  it.each([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)])(
    'never finds prototype member `%s` as a schema property or $ref target',
    (name) => {
      expect(missingSchemaPaths(schema, [[name], ['applicant', name]])).toEqual([
        { path: [name], missingAt: 0 },
        { path: ['applicant', name], missingAt: 1 },
      ]);
      const viaRef = { type: 'object', properties: { x: { $ref: `#/${name}/properties` } } };
      expect(missingSchemaPaths(viaRef, [['x', 'y']])).toEqual([{ path: ['x', 'y'], missingAt: 1 }]);
      // and an own property of that name is found
      expect(missingSchemaPaths({ type: 'object', properties: { [name]: {} } }, [[name]])).toEqual([]);
    },
  );

  it('survives a self-referencing schema', () => {
    const loop = { $ref: '#', properties: { a: { $ref: '#' } } };
    expect(missingSchemaPaths(loop, [['a', 'a', 'a'], ['b']])).toEqual([{ path: ['b'], missingAt: 0 }]);
  });
});

describe('compileSchema', () => {
  it('uses 2020-12 by default and draft-07 by `$schema`', () => {
    expect(compileSchema({ type: 'array', prefixItems: [{ type: 'string' }] })).toMatchObject({ ok: true, dialect: '2020-12' });
    expect(compileSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toMatchObject({
      ok: true,
      dialect: 'draft-07',
    });
  });

  it('refuses invalid schemas and unresolvable refs, and knows formats', () => {
    expect(compileSchema({ type: 12 })).toMatchObject({ ok: false });
    expect(compileSchema({ $ref: '#/nowhere' })).toMatchObject({ ok: false });
    const email = compileSchema({ type: 'string', format: 'email' });
    expect(email.ok && email.validate('not an email')).toBe(false);
  });

  it('matches `pattern` and `patternProperties` with RE2: `^(a+)+$` is linear, not a second of backtracking', () => {
    for (const $schema of [undefined, 'http://json-schema.org/draft-07/schema#']) {
      const compiled = compileSchema({ ...($schema ? { $schema } : {}), type: 'string', pattern: '^(a+)+$' });
      if (!compiled.ok) throw new Error(compiled.message);
      // With backtracking this input would not be answered within the test's time-out (2^5000 paths).
      expect(compiled.validate(`${'a'.repeat(5000)}!`)).toBe(false);
      expect(compiled.validate('aaa')).toBe(true);
    }
    const props = compileSchema({ type: 'object', patternProperties: { '^x_(a+)+$': { type: 'number' } } });
    expect(props.ok && props.validate({ x_aa: 1 })).toBe(true);
    expect(props.ok && props.validate({ x_aa: 'no' })).toBe(false);
  });

  it('refuses a pattern RE2 does not support (a backreference), saying why', () => {
    const compiled = compileSchema({ type: 'string', pattern: '(a)\\1' });
    expect(compiled).toMatchObject({ ok: false });
    expect(!compiled.ok && compiled.message).toContain('backreferences such as `\\1` are not supported (RE2 syntax)');
  });
});

describe('policyPublishProblems', () => {
  it('is empty for a sound policy', () => {
    const rule = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
    expect(policyPublishProblems({ rule, schema: null, tests: [{ name: 't', data: { applicant: { age: 18 } }, expect: true }] })).toEqual(
      [],
    );
  });

  it('fails a saved test that needs more steps than the budget (the run would answer budget_exceeded)', () => {
    const rule = 'if any of o.items satisfies (any of o.items satisfies (its.p == 5)) -> ok.';
    const tests = [{ name: 'big', data: { o: { items: Array.from({ length: 100 }, () => ({ p: 1 })) } }, expect: false }];
    // 100 × (100 comparisons + 100 inner elements) + 100 outer elements = 20,100 steps.
    expect(policyPublishProblems({ rule, schema: null, tests }, 20_100)).toEqual([]);
    expect(policyPublishProblems({ rule, schema: null, tests }, 20_099)).toEqual([
      { code: 'test_failed', message: 'test `big`: Budget exceeded: the evaluation needs more than 20099 steps', path: 'tests.0' },
    ]);
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
});
