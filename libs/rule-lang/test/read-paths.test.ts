import { describe, expect, it } from 'vitest';
import { ELEMENT, RuleParseError, keyCandidates, keyFamily, readPaths } from '../src/index.js';

describe('readPaths', () => {
  it('lists every path read, root first, as written, with array elements marked', () => {
    const text = `A **driver** gets a licence
      if the __age__ of the **driver** in the **application** is at least 17
      and the __date of birth__ of the **driver** is older than 17 years
      and any of the __endorsements__ of the **driver** where (its __points__ is less than the __max points__ of the **rules**)
      and policy.limits.max >= application.amount.`;
    expect(readPaths(text)).toEqual([
      ['application', 'driver', 'age'],
      ['driver', 'date of birth'],
      ['driver', 'endorsements'],
      ['driver', 'endorsements', ELEMENT, 'points'],
      ['rules', 'max points'],
      ['policy', 'limits', 'max'],
      ['application', 'amount'],
    ]);
  });

  it('follows nested quantifiers and removes duplicates', () => {
    const text = `if all order.lines satisfies (any its.tags where (its is "x") and its.qty >= 1) and order.lines is not empty -> ok.`;
    expect(readPaths(text)).toEqual([
      ['order', 'lines'],
      ['order', 'lines', ELEMENT, 'tags'],
      ['order', 'lines', ELEMENT, 'tags', ELEMENT],
      ['order', 'lines', ELEMENT, 'qty'],
    ]);
  });

  it('throws RuleParseError for a policy that does not check', () => {
    expect(() => readPaths('if $nope -> x.')).toThrow(RuleParseError);
  });
});

describe('keyCandidates', () => {
  it('tries exact, camelCase and snake_case without duplicates', () => {
    expect(keyCandidates('date of birth')).toEqual(['date of birth', 'dateOfBirth', 'date_of_birth']);
    expect(keyCandidates('IBAN number')).toEqual(['IBAN number', 'ibanNumber', 'iban_number']);
    expect(keyCandidates('firstName')).toEqual(['firstName', 'first_name']);
    expect(keyCandidates('age')).toEqual(['age']);
  });
});

describe('keyFamily', () => {
  it('gives every candidate of one written name the same family, and other names other families', () => {
    for (const written of ['date of birth', 'IBAN number', 'home_address', 'firstName', 'address 2 line', 'Applicant', 'a ßb']) {
      const families = new Set([written, ...keyCandidates(written)].map(keyFamily));
      expect([...families], written).toHaveLength(1);
    }
    expect(keyFamily('credit score')).toBe(keyFamily('CreditScore'));
    expect(keyFamily('credit-score')).toBe(keyFamily('credit_score'));
    expect(keyFamily('creditscore')).not.toBe(keyFamily('creditScore'));
    expect(keyFamily('a_bc')).not.toBe(keyFamily('ab_c'));
    expect(keyFamily('_')).toBe('_');
    expect(keyFamily('-')).not.toBe(keyFamily('_'));
  });
});
