/** The saved test a recorded decision makes (src/tests-from-decisions.ts), without HTTP. */

import { isArbiterError, type DecisionRecord } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { MASKED_SUFFIX, testFromDecision } from '../src/tests-from-decisions.js';

const BASE = '0190a0b0-0000-7000-8000-000000000001';
const decision: DecisionRecord = {
  decisionId: '0190a0b0-0000-7000-8000-0000000000d1',
  orgId: 'acme',
  at: '2026-11-26T18:06:12.301Z',
  now: '2026-11-26T18:06:12.301Z',
  kind: 'policy',
  baseId: BASE,
  policyId: '0190a0b0-0000-7000-8000-000000000002',
  version: 1,
  caller: { userId: 'admin' },
  input: { applicant: { score: 700 } },
  masked: false,
  result: true,
  outcomes: { approved: true },
  errorCode: null,
  durationUs: 40,
};

/** The reason code of the 400 `fn` throws. */
function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (isArbiterError(err, 'validation_failed')) return err.errors?.[0]?.code;
    throw err;
  }
  return undefined;
}

describe('testFromDecision', () => {
  it('takes the input as data and the result as expect', () => {
    expect(testFromDecision(decision, 'policy', BASE, 'approved')).toEqual({
      name: 'approved',
      data: { applicant: { score: 700 } },
      expect: true,
    });
  });

  it('says a masked input in the name, cut to stay within 200 characters', () => {
    const masked = { ...decision, masked: true, input: { applicant: { score: 700, ssn: '***' } } };
    expect(testFromDecision(masked, 'policy', BASE, 'approved').name).toBe(`approved${MASKED_SUFFIX}`);
    const long = testFromDecision(masked, 'policy', BASE, 'n'.repeat(200)).name;
    expect([long.length, long.endsWith(MASKED_SUFFIX)]).toEqual([200, true]);
  });

  it('keeps a flow result as it was answered', () => {
    const flow = { ...decision, kind: 'flow' as const, result: { tier: 'gold' } };
    expect(testFromDecision(flow, 'flow', BASE, 'gold').expect).toEqual({ tier: 'gold' });
  });

  it('refuses a decision of another base or kind, one that ended in an error, and a result the test cannot expect', () => {
    expect(reasonOf(() => testFromDecision(decision, 'policy', '0190a0b0-0000-7000-8000-000000000009', 'x'))).toBe(
      'decision_of_other_base',
    );
    expect(reasonOf(() => testFromDecision(decision, 'flow', BASE, 'x'))).toBe('decision_of_other_base');
    expect(reasonOf(() => testFromDecision({ ...decision, result: false, errorCode: 'missing_property' }, 'policy', BASE, 'x'))).toBe(
      'decision_error',
    );
    expect(reasonOf(() => testFromDecision({ ...decision, result: 'gold' }, 'policy', BASE, 'x'))).toBe('invalid_test');
  });
});
