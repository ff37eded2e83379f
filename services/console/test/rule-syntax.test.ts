import { describe, expect, it } from 'vitest';
import { errorLocation, errorRange, traceLineSources } from '../src/lib/rule-syntax.js';
import { operatorPrefix, validateDiagnostics } from '../src/editor/rule-extensions.js';

const TYPO = 'A **driver** gets a licence if the __age__ of the **driver** is old.';

describe('errorLocation', () => {
  it('reads the line and column of a parse error', () => {
    expect(errorLocation('Parse error: line 3, column 12: unexpected word `x`')).toEqual({ line: 3, column: 12 });
  });
  it('answers null when the message names no place', () => {
    expect(errorLocation('Missing property: driver.age')).toBeNull();
  });
});

describe('errorRange', () => {
  it('underlines the word at the reported column (1-based)', () => {
    const { from, to } = errorRange(TYPO, { line: 1, column: 65 });
    expect(TYPO.slice(from, to)).toBe('old');
  });
  it('counts earlier lines', () => {
    const text = 'first line.\nsecond bad line.';
    const { from, to } = errorRange(text, { line: 2, column: 8 });
    expect(text.slice(from, to)).toBe('bad');
  });
  it('clamps a place past the end of the text and still underlines one character', () => {
    const { from, to } = errorRange('abc', { line: 9, column: 99 });
    expect([from, to]).toEqual([2, 3]);
  });
  it('underlines one character of an empty text without going past it', () => {
    expect(errorRange('', { line: 1, column: 1 })).toEqual({ from: 0, to: 0 });
  });
});

describe('validateDiagnostics', () => {
  it('turns an invalid /validate answer into an error underlining the reported word', () => {
    const [d, ...rest] = validateDiagnostics(TYPO, { valid: false, error: 'Parse error: line 1, column 65: unexpected word `old`' });
    expect(rest).toEqual([]);
    expect(d?.severity).toBe('error');
    expect(TYPO.slice(d!.from, d!.to)).toBe('old');
  });
  it('has nothing to say about a valid rule', () => {
    expect(validateDiagnostics(TYPO, { valid: true, error: null })).toEqual([]);
  });

  it('underlines each static-check warning of a valid rule at its condition', () => {
    const text = 'if x.n > 5\n  and x.n < 3 -> ok.';
    const check = { check: 'contradiction' as const, severity: 'warning' as const, message: 'm', line: 2, column: 7, text: 'x.n < 3' };
    expect(validateDiagnostics(text, { valid: true, error: null, checks: [check] })).toEqual([
      { from: 17, to: 24, severity: 'warning', message: 'm', source: 'contradiction' },
    ]);
    expect(text.slice(17, 24)).toBe('x.n < 3');
  });
});

describe('traceLineSources', () => {
  const rule =
    'A **driver** gets a licence if the __age__ of the **driver** is at least 17 and the **driver** passes the eyesight test.\n' +
    'A **driver** passes the eyesight test if the __vision score__ of the **driver** is greater than 0.5.';
  const trace = [
    'rule "the eyesight test" [subject driver]',
    '  if $.driver.visionScore = 0.8: is greater than 0.5 -> true',
    '  => the eyesight test = true',
    'rule "a licence" [golden]',
    '  if $.driver.age = 18: is greater than or equal to 17 -> true',
    'result: true',
  ];
  it('links each rule header and its indented lines to the line defining the rule, not one referencing it', () => {
    expect(traceLineSources(rule, trace)).toEqual([2, 2, 2, 1, 1, null]);
  });
  it('links shorthand rules by the outcome after the arrow', () => {
    expect(traceLineSources('# free\nif order.total > 50 -> free shipping.', ['rule "free shipping" [golden]', '  x'])).toEqual([2, 2]);
  });
  it('leaves a rule it cannot find unlinked', () => {
    expect(traceLineSources('if a.b > 1 -> ok.', ['rule "other" [golden]', '  x'])).toEqual([null, null]);
  });
});

describe('operatorPrefix', () => {
  it('takes the operator phrase being typed, from its first word', () => {
    expect(operatorPrefix('the __age__ of the **driver** is at')).toBe('is at');
    expect(operatorPrefix('if order.total >')).toBe('>');
    expect(operatorPrefix('the **driver** does not')).toBe('does not');
  });
  it('is null when no operator is being typed', () => {
    expect(operatorPrefix('A **driver** gets a lic')).toBeNull();
    expect(operatorPrefix('')).toBeNull();
  });
});
