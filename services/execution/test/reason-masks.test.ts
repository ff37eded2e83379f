/**
 * Reasons in decision records are masked like the input (docs/decisions.md#reasons): the value of
 * an entry at (or under) a masked path, inside a value holding masked paths, in every spelling of
 * a key, and in the sentence, even where it was cut with `…`. Reasons come from the real engine.
 */
import type { Reasons } from '@arbiter/contracts';
import { evaluate } from '@arbiter/rule-lang';
import { describe, expect, it } from 'vitest';
import { applyMasks, compileMasks } from '../src/recording/masks.js';
import { maskReasons, pathSegments } from '../src/recording/reason-masks.js';

const RULE = `An **applicant** is approved if
  the __score__ of the **applicant** is at least 600
  and the __credit score__ of the **applicant** is at least 700
  and any of the __accounts__ of the **applicant** satisfies (its __iban__ is "FR34").`;

function reasonsOf(rule: string, data: unknown): Reasons {
  const reasons = evaluate(rule, data, { reasons: true }).reasons;
  if (reasons === undefined) throw new Error('no reasons');
  return reasons as Reasons;
}

describe('maskReasons', () => {
  const data = { applicant: { score: 512, credit_score: 641, accounts: [{ iban: 'DE12' }, { iban: 'FR34' }] } };

  it('masks values at masked paths, in any spelling and through lists, and their text in the sentence', () => {
    const reasons = reasonsOf(RULE, data);
    expect(reasons.sentence).toContain('(512)');
    expect(reasons.sentence).toContain('(641)');
    const masked = maskReasons(reasons, [compileMasks(['applicant.score']), compileMasks(['applicant.creditScore'])]);
    const text = JSON.stringify(masked);
    expect(text).not.toContain('512');
    expect(text).not.toContain('641');
    expect(masked.sentence).toBe(
      'approved is false because the score of the applicant ("***") is not at least 600 and the credit score of the applicant ("***") is not at least 700',
    );
    expect(masked.because.map((e) => [e.path, e.value])).toEqual([
      ['applicant.score', '***'],
      ['applicant.credit_score', '***'],
    ]);
    // The engine's own reasons are left as they were.
    expect(reasons.because[0]!.value).toBe(512);
  });

  it('masks the deciding element of a quantifier by a `*` mask', () => {
    const ok = { applicant: { score: 900, creditScore: 800, accounts: [{ iban: 'DE12' }, { iban: 'FR34' }] } };
    const reasons = reasonsOf(RULE, ok);
    expect(JSON.stringify(reasons)).toContain('"FR34"');
    const masked = maskReasons(reasons, [compileMasks(['applicant.accounts.*.iban'])]);
    const any = masked.because.find((e) => e.kind === 'any')!;
    expect(any.element).toBe(1);
    expect(any.because![0]).toMatchObject({ path: 'applicant.accounts[1].iban', value: '***' });
    // The rule's own text keeps its operand ("FR34" as written); the value found is gone from the sentence.
    expect(masked.sentence).not.toMatch(/\("FR34"\)/);
    expect(masked.because.find((e) => e.kind === 'condition' && e.path === 'applicant.score')!.value).toBe(900);
  });

  it('masks inside a value that holds masked paths, and a value whose path is not a data path', () => {
    const reasons: Reasons = {
      result: false,
      sentence: 'x is false because the applicant ({"name":"Ann","ssn":"078-05-1120"}) is not empty and y (7) is not 8',
      because: [
        {
          kind: 'condition',
          rule: 'x',
          text: 'the **applicant** is empty',
          holds: false,
          path: 'applicant',
          value: { name: 'Ann', ssn: '078-05-1120' },
          line: 1,
          column: 1,
        },
        { kind: 'condition', rule: 'x', text: 'y is 8', holds: false, path: 'the y', value: 7, line: 1, column: 30 },
      ],
    };
    const masked = maskReasons(reasons, [compileMasks(['applicant.ssn', 'unrelated'])]);
    expect(masked.because[0]!.value).toEqual({ name: 'Ann', ssn: '***' });
    expect(masked.because[1]!.value).toBe('***');
    expect(masked.sentence).toBe('x is false because the applicant ({"name":"Ann","ssn":"***"}) is not empty and y ("***") is not 8');
  });

  it('drops what is left of a masked value where the sentence was cut', () => {
    const reasons: Reasons = {
      result: false,
      sentence: 'x is false because the ssn of the applicant ("078-05…',
      because: [
        {
          kind: 'condition',
          rule: 'x',
          text: 'the __ssn__ of the **applicant** is "1"',
          holds: false,
          path: 'applicant.ssn',
          value: '078-05-1120',
          line: 1,
          column: 1,
        },
      ],
      truncated: true,
    };
    const masked = maskReasons(reasons, [compileMasks(['applicant.ssn'])]);
    expect(masked.sentence).toBe('x is false because the ssn of the applicant ("***")…');
  });

  it('answers the same reasons when no mask applies', () => {
    const reasons = reasonsOf(RULE, data);
    expect(maskReasons(reasons, [compileMasks([])])).toBe(reasons);
    expect(maskReasons(reasons, [compileMasks(['other.path'])])).toBe(reasons);
  });

  it('agrees with the input masks on every entry (same data, same masks)', () => {
    const input = structuredClone(data);
    const masks = compileMasks(['applicant.accounts.*', 'applicant.score']);
    applyMasks(input, masks);
    const masked = maskReasons(reasonsOf(RULE, data), [masks]);
    for (const e of masked.because) if (e.path === 'applicant.score') expect(e.value).toBe(input.applicant.score);
  });
});

describe('pathSegments', () => {
  it('reads dotted keys, bracketed keys and indexes, and refuses anything else', () => {
    expect(pathSegments('order.items[2].price')).toEqual(['order', 'items', '2', 'price']);
    expect(pathSegments('applicant["credit score"].x')).toEqual(['applicant', 'credit score', 'x']);
    expect(pathSegments('["a.b"]["c\\"d"]')).toEqual(['a.b', 'c"d']);
    for (const bad of ['the y', 'a.', 'a[', 'a[x]', 'a["x"', '']) expect(pathSegments(bad), bad).toBeUndefined();
  });
});
