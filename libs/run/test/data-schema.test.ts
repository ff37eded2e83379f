/** compileDataSchema: the schema check of a stored run, with the execution service's messages. */
import { describe, expect, it } from 'vitest';
import { compileDataSchema } from '../src/index.js';

const SCHEMA = {
  type: 'object',
  required: ['applicant'],
  additionalProperties: false,
  properties: { applicant: { type: 'object', required: ['age'], properties: { age: { type: 'integer' }, email: { format: 'email' } } } },
};

describe('compileDataSchema', () => {
  const schema = compileDataSchema(SCHEMA);

  it('answers null for conforming data', () => {
    expect(schema.mismatch({ applicant: { age: 20, email: 'a@b.example' } })).toBeNull();
  });

  it('names the first failing path, dotted', () => {
    expect(schema.mismatch({})).toBe('Schema mismatch: `applicant`: is required');
    expect(schema.mismatch({ applicant: {} })).toBe('Schema mismatch: `applicant.age`: is required');
    expect(schema.mismatch({ applicant: { age: 'x' } })).toBe('Schema mismatch: `applicant.age`: must be integer');
    expect(schema.mismatch({ applicant: { age: 1 }, extra: 1 })).toBe('Schema mismatch: `extra`: is not allowed by the schema');
    expect(schema.mismatch({ applicant: { age: 1, email: 'nope' } })).toBe('Schema mismatch: `applicant.email`: must match format "email"');
  });

  it('follows draft-07 when `$schema` names it, and compiles the same schema twice', () => {
    const draft7 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'https://schemas.example/applicant',
      type: 'object',
      required: ['a'],
    };
    expect(compileDataSchema(draft7).mismatch({})).toBe('Schema mismatch: `a`: is required');
    expect(compileDataSchema(draft7).mismatch({ a: 1 })).toBeNull();
  });

  it('data too deep for the validation to finish is an answer, not a crash', () => {
    const chain = compileDataSchema({
      $ref: '#/$defs/node',
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
    });
    let data: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) data = { next: data };
    expect(chain.mismatch(data)).toBe("Schema mismatch: the policy's JSON Schema cannot be applied: its validation recursed too deeply");
    expect(chain.mismatch({ next: { next: {} } })).toBeNull();
  });

  it('a schema that does not compile answers that for every run', () => {
    const broken = compileDataSchema({ type: 'object', properties: { a: { $ref: '#/nowhere' } } });
    expect(broken.mismatch({ a: 1 })).toMatch(/^Schema mismatch: the policy's JSON Schema does not compile: can't resolve reference/);
  });
});
