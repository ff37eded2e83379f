/** Static checks of a policy (src/check/policy-checks.ts): warnings with positions that point at the text. */

import { describe, expect, it } from 'vitest';
import { policyChecks, validate, type PolicyCheck } from '../src/index.js';

/** Every finding's line/column must point at its text in the policy. */
function expectPositions(policy: string, checks: PolicyCheck[]): void {
  const lines = policy.split('\n');
  for (const c of checks) {
    const line = Array.from(lines[c.line - 1]);
    expect(line.slice(c.column - 1, c.column - 1 + Array.from(c.text).length).join('')).toBe(c.text);
  }
}

function checksOf(policy: string): PolicyCheck[] {
  const result = policyChecks(policy);
  expect(result.complete).toBe(true);
  expectPositions(policy, result.checks);
  return result.checks;
}

describe('constant_condition', () => {
  it('finds nothing in a clean policy', () => {
    expect(checksOf('if a.b is in ["x"] and a.c > a.d -> ok.')).toEqual([]);
  });

  it('reports a membership in an empty list, always false, and its negation, always true', () => {
    const policy = 'A **p** is ok\n  if p.tier is in []\n  or p.kind is not in [].';
    expect(checksOf(policy)).toEqual([
      {
        check: 'constant_condition',
        severity: 'warning',
        message: '`p.tier is in []` is always false: nothing is in an empty list',
        line: 2,
        column: 6,
        text: 'p.tier is in []',
      },
      {
        check: 'constant_condition',
        severity: 'warning',
        message: '`p.kind is not in []` is always true: nothing is in an empty list',
        line: 3,
        column: 6,
        text: 'p.kind is not in []',
      },
    ]);
  });

  it('reports a strict ordering of a value with itself', () => {
    const checks = checksOf('if the __age__ of the **p** > p.age -> odd.');
    expect(checks.map((c) => [c.check, c.text, c.line, c.column])).toEqual([
      ['constant_condition', 'the __age__ of the **p** > p.age', 1, 4],
    ]);
    expect(checks[0].message).toContain('is always false');
  });

  it('leaves `if present` alone where a missing value makes it true', () => {
    expect(checksOf('if p.tier is in [] if present -> ok.')).toEqual([]);
  });
});

describe('contradiction', () => {
  it('finds nothing when the conditions can all hold, or are joined by or', () => {
    expect(checksOf('if x.n > 5 and x.n < 9 and x.s is "a" and x.s is "A" -> ok.')).toEqual([]);
    expect(checksOf('if x.n > 5 or x.n < 3 -> ok.')).toEqual([]);
    expect(checksOf('if x.n >= 5 and x.n <= 5 and x.m is "a" and x.m is not "b" -> ok.')).toEqual([]);
  });

  it('reports numbers outside each other’s intervals, at the later condition', () => {
    const policy = 'A **x** is ok\n  if x.n > 5\n  and x.n < 3.';
    const checks = checksOf(policy);
    expect(checks).toEqual([
      {
        check: 'contradiction',
        severity: 'warning',
        message:
          '`x.n < 3` cannot hold together with `x.n > 5`: no value of x.n satisfies them all, so the conditions joined by `and` are always false',
        line: 3,
        column: 7,
        text: 'x.n < 3',
      },
    ]);
  });

  it('reports two different values for one path, and a value both required and excluded', () => {
    expect(checksOf('if x.s is "a" and x.s is "b" -> ok.').map((c) => [c.check, c.text])).toEqual([['contradiction', 'x.s is "b"']]);
    expect(checksOf('if x.n == 5 and x.n != 5 -> ok.').map((c) => c.text)).toEqual(['x.n != 5']);
    expect(checksOf('if x.n is in [1, 2] and x.n > 4 -> ok.').map((c) => c.text)).toEqual(['x.n > 4']);
    expect(checksOf('if x.d > 2024-01-01 and x.d < 2023-01-01 -> ok.').map((c) => c.text)).toEqual(['x.d < 2023-01-01']);
  });

  it('looks inside groups without or and inside any/all, not across or', () => {
    expect(checksOf('if (x.n > 5 and x.m is "a") and x.n < 3 -> ok.').map((c) => c.text)).toEqual(['x.n < 3']);
    expect(checksOf('if any of x.items satisfies (its.k is "a" and its.k is "b") -> fine.').map((c) => c.text)).toEqual(['its.k is "b"']);
    expect(checksOf('if (x.n > 5 or x.m is "a") and x.n < 3 -> ok.')).toEqual([]);
  });

  it('stays silent where loose equality or if present could make both hold', () => {
    // "5" (text) and 5 (number) are loosely equal; booleans match "true"; if present holds on a missing value.
    expect(checksOf('if x.n is "5" and x.n is 5 -> ok.')).toEqual([]);
    expect(checksOf('if x.b is true and x.b is "true" -> ok.')).toEqual([]);
    expect(checksOf('if x.n > 5 if present and x.n < 3 if present -> ok.')).toEqual([]);
  });
});

describe('unreferenced rules', () => {
  it('stay the parse error they are: every rule but the golden one must be referenced', () => {
    expect(validate('if x.a > 1 -> ok.\nif x.b > 1 -> other.').error).toBe(
      'Parse error: multiple golden rules: "ok", "other": exactly one rule may be left unreferenced by the others',
    );
  });
});

describe('unknown labels', () => {
  it('stay a parse error', () => {
    expect(() => policyChecks('if $nope -> ok.')).toThrow(/unknown label `\$nope`/);
  });
});

describe('bounded work', () => {
  it('says the checks are incomplete when the work bound stops them', () => {
    const policy = `if ${Array.from({ length: 50 }, (_, i) => `x.n > ${i}`).join(' and ')} -> ok.`;
    expect(policyChecks(policy).complete).toBe(true);
    expect(policyChecks(policy, 20)).toEqual({ checks: [], complete: false });
  });
});
