import { describe, expect, it } from 'vitest';
import { StepBudget } from '@arbiter/rule-lang';
import { answerPolicy, answerRule, capReasons, compileDataSchema, compileRule, resolveRun, RUN_DEFAULTS } from '../src/index.js';

const ADULT = 'A **user** is adult if the __age__ of the **user** is at least 18.';
const adult = compileRule(ADULT);

describe('reasons through the run layer', () => {
  it('are off by default: the options and the answer are exactly those of before', () => {
    expect(RUN_DEFAULTS.reasons).toBe(false);
    const run = resolveRun({ trace: false });
    expect(run.reasons).toBe(false);
    expect(run.options).toEqual({ trace: false, stepBudget: RUN_DEFAULTS.stepBudget });
    expect(JSON.stringify(answerPolicy(adult, { user: { age: 3 } }, run))).toBe('{"result":false,"trace":[],"outcomes":{"adult":false}}');
    expect(resolveRun({ trace: false, flags: { reasons: false } })).toEqual(run);
  });

  it('come last in the answer when asked for, beside a trace or not', () => {
    for (const trace of [false, true]) {
      const answer = answerPolicy(adult, { user: { age: 3 } }, resolveRun({ trace, flags: { reasons: true } }));
      expect(Object.keys(answer)).toEqual(['result', 'trace', 'outcomes', 'reasons']);
      expect(answer.reasons).toEqual({
        result: false,
        sentence: 'adult is false because the age of the user (3) is not at least 18',
        because: [
          {
            kind: 'condition',
            rule: 'adult',
            text: 'the __age__ of the **user** is at least 18',
            holds: false,
            path: 'user.age',
            value: 3,
            line: 1,
            column: 24,
          },
        ],
      });
    }
  });

  it('keep the error keys before them, and take a shared budget', () => {
    const answer = answerPolicy(adult, { user: {} }, resolveRun({ trace: false, flags: { reasons: true } }), {
      budget: new StepBudget(100),
    });
    expect(Object.keys(answer)).toEqual(['result', 'trace', 'outcomes', 'error', 'errorCode', 'reasons']);
    expect(answer.reasons!.because[0]).toMatchObject({ kind: 'missing', path: 'user.age', error: 'Missing property: user.age' });
  });

  it('say why a rule that does not parse, and data that breaks the schema, never ran', () => {
    const run = resolveRun({ trace: false, flags: { reasons: true } });
    const bad = answerRule('if x.a >= -> ok.', {}, run);
    expect(bad.reasons).toEqual({
      result: false,
      sentence: bad.error,
      because: [{ kind: 'error', rule: '', text: '', holds: false, error: bad.error, line: 1, column: expect.any(Number) as number }],
    });
    const schema = compileDataSchema({ type: 'object', required: ['user'] });
    const mismatch = answerPolicy(adult, {}, run, { schema });
    expect(mismatch.reasons!.because).toEqual([
      { kind: 'error', rule: '', text: '', holds: false, error: mismatch.error, line: 0, column: 0 },
    ]);
    expect(answerPolicy(adult, {}, resolveRun({ trace: false }), { schema }).reasons).toBeUndefined();
  });

  it('are capped: within the cap unchanged, past it cut with the truncated marker', () => {
    const rule = compileRule('if all of x.items satisfies (its.name is not "") -> named.');
    const data = { x: { items: Array.from({ length: 400 }, (_, i) => ({ name: `item ${i} `.repeat(30) })) } };
    const whole = answerPolicy(rule, data, resolveRun({ trace: false, flags: { reasons: true } }));
    expect(whole.reasons!.truncated).toBeUndefined();
    const small = { x: { items: [{ name: '' }, ...data.x.items] } };
    const failing = answerPolicy(rule, small, resolveRun({ trace: false, flags: { reasons: true } }, { maxReasonsBytes: 300 }));
    expect(failing.reasons!.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(failing.reasons))).toBeLessThanOrEqual(300);
    expect(failing.reasons!.because[0]).toMatchObject({ kind: 'all', element: 0 });
  });

  it('capReasons: unchanged within the cap; a long sentence and large values cut, the first entries kept', () => {
    const reasons = {
      result: false,
      sentence: `ok is false because ${'x'.repeat(5000)}`,
      because: Array.from({ length: 50 }, (_, i) => ({
        kind: 'condition' as const,
        rule: 'ok',
        text: `x.v${i} > 1`,
        holds: false,
        path: `x.v${i}`,
        value: { big: 'y'.repeat(2000) },
        line: 1,
        column: i + 1,
      })),
    };
    expect(capReasons(reasons, Infinity)).toBe(reasons);
    expect(capReasons(reasons, 1_000_000)).toBe(reasons);
    const capped = capReasons(reasons, 2048);
    expect(Buffer.byteLength(JSON.stringify(capped))).toBeLessThanOrEqual(2048);
    expect(capped.truncated).toBe(true);
    expect(capped.sentence.endsWith('…')).toBe(true);
    expect(capped.because.length).toBeGreaterThan(0);
    expect(capped.because[0]).toEqual({ kind: 'condition', rule: 'ok', text: 'x.v0 > 1', holds: false, path: 'x.v0', line: 1, column: 1 });
  });
});
