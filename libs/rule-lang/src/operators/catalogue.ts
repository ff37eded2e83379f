/** The operator catalogue (LANGUAGE.md §7.1, §12.3): canonical names, written forms, operand kinds. */

export type CanonicalOperator =
  | 'is greater than'
  | 'is greater than or equal to'
  | 'is less than'
  | 'is no more than'
  | 'is equal to'
  | 'is exactly'
  | 'is in'
  | 'contains'
  | 'is a valid email'
  | 'is a valid uuid'
  | 'is a valid date'
  | 'format check'
  | 'pattern'
  | 'period'
  | 'is empty'
  | 'is later than'
  | 'is earlier than'
  | 'is older than'
  | 'is younger than';

/** What may follow an operator. `value` = string, number, boolean or date literal. */
export type OperandKind = 'valueOrPath' | 'valueListOrPath' | 'listOrPath' | 'none' | 'string' | 'period';

interface OperatorSpec {
  operandKind: OperandKind;
  /** Rows 1–7 of §7.1: allowed after `length of` / `number of`. */
  measurable: boolean;
}

export const OPERATORS: Readonly<Record<CanonicalOperator, OperatorSpec>> = {
  'is greater than': { operandKind: 'valueOrPath', measurable: true },
  'is greater than or equal to': { operandKind: 'valueOrPath', measurable: true },
  'is less than': { operandKind: 'valueOrPath', measurable: true },
  'is no more than': { operandKind: 'valueOrPath', measurable: true },
  'is equal to': { operandKind: 'valueListOrPath', measurable: true },
  'is exactly': { operandKind: 'valueListOrPath', measurable: true },
  'is in': { operandKind: 'listOrPath', measurable: false },
  contains: { operandKind: 'valueOrPath', measurable: false },
  'is a valid email': { operandKind: 'none', measurable: false },
  'is a valid uuid': { operandKind: 'none', measurable: false },
  'is a valid date': { operandKind: 'none', measurable: false },
  'format check': { operandKind: 'string', measurable: false },
  pattern: { operandKind: 'string', measurable: false },
  period: { operandKind: 'period', measurable: false },
  'is empty': { operandKind: 'none', measurable: false },
  'is later than': { operandKind: 'valueOrPath', measurable: false },
  'is earlier than': { operandKind: 'valueOrPath', measurable: false },
  'is older than': { operandKind: 'period', measurable: false },
  'is younger than': { operandKind: 'period', measurable: false },
};

/** Written form (lower case, single spaces) → canonical operator and negation (§7.1, §7.4). */
export const FORMS: ReadonlyMap<string, { name: CanonicalOperator; negated: boolean }> = new Map(
  (
    [
      ['is greater than', 'is greater than', false],
      ['>', 'is greater than', false],
      ['is not greater than', 'is greater than', true],
      ['is greater than or equal to', 'is greater than or equal to', false],
      ['is at least', 'is greater than or equal to', false],
      ['>=', 'is greater than or equal to', false],
      ['is not greater than or equal to', 'is greater than or equal to', true],
      ['is not at least', 'is greater than or equal to', true],
      ['is less than', 'is less than', false],
      ['<', 'is less than', false],
      ['is not less than', 'is less than', true],
      ['is no more than', 'is no more than', false],
      ['is less than or equal to', 'is no more than', false],
      ['<=', 'is no more than', false],
      ['is not less than or equal to', 'is no more than', true],
      ['is equal to', 'is equal to', false],
      ['is', 'is equal to', false],
      ['equals', 'is equal to', false],
      ['==', 'is equal to', false],
      ['is the same as', 'is equal to', false],
      ['is not equal to', 'is equal to', true],
      ['is not', 'is equal to', true],
      ['does not equal', 'is equal to', true],
      ['is not the same as', 'is equal to', true],
      ['!=', 'is equal to', true],
      ['is exactly', 'is exactly', false],
      ['is exactly equal to', 'is exactly', false],
      ['is not exactly', 'is exactly', true],
      ['is not exactly equal to', 'is exactly', true],
      ['is in', 'is in', false],
      ['is not in', 'is in', true],
      ['contains', 'contains', false],
      ['does not contain', 'contains', true],
      ['is a valid email', 'is a valid email', false],
      ['is a valid email address', 'is a valid email', false],
      ['is not a valid email', 'is a valid email', true],
      ['is not a valid email address', 'is a valid email', true],
      ['is a valid uuid', 'is a valid uuid', false],
      ['is not a valid uuid', 'is a valid uuid', true],
      ['is a valid date', 'is a valid date', false],
      ['is not a valid date', 'is a valid date', true],
      ['has the format', 'format check', false],
      ['does not have the format', 'format check', true],
      ['matches pattern', 'pattern', false],
      ['does not match pattern', 'pattern', true],
      ['is within', 'period', false],
      ['is not within', 'period', true],
      ['is empty', 'is empty', false],
      ['is not empty', 'is empty', true],
      ['is later than', 'is later than', false],
      ['is not later than', 'is later than', true],
      ['is earlier than', 'is earlier than', false],
      ['is not earlier than', 'is earlier than', true],
      ['is older than', 'is older than', false],
      ['is not older than', 'is older than', true],
      ['is younger than', 'is younger than', false],
      ['is not younger than', 'is younger than', true],
    ] as const
  ).map(([form, name, negated]) => [form, { name, negated }]),
);

/** `list_operators` (LANGUAGE.md §12.3), in this exact order. */
const CATALOGUE: readonly { operator: string; forms: readonly string[] }[] = [
  { operator: 'is greater than', forms: ['is greater than', '>'] },
  { operator: 'is greater than or equal to', forms: ['is greater than or equal to', 'is at least', '>='] },
  { operator: 'is less than', forms: ['is less than', '<'] },
  { operator: 'is no more than', forms: ['is no more than', 'is less than or equal to', '<='] },
  { operator: 'is equal to', forms: ['is equal to', 'is', 'equals', '==', 'is the same as'] },
  { operator: 'is exactly', forms: ['is exactly', 'is exactly equal to'] },
  { operator: 'is not equal to', forms: ['is not equal to', 'is not', 'does not equal', 'is not the same as', '!='] },
  { operator: 'is in', forms: ['is in'] },
  { operator: 'contains', forms: ['contains'] },
  { operator: 'is a valid email', forms: ['is a valid email', 'is a valid email address'] },
  { operator: 'is a valid uuid', forms: ['is a valid uuid'] },
  { operator: 'is a valid date', forms: ['is a valid date'] },
  { operator: 'format check', forms: ['has the format "<format_name>"'] },
  { operator: 'pattern', forms: ['matches pattern "<pattern>"'] },
  { operator: 'period', forms: ['is within <n> days', 'is within <n> <unit>'] },
  { operator: 'is not in', forms: ['is not in'] },
  { operator: 'is empty', forms: ['is empty'] },
  { operator: 'is not empty', forms: ['is not empty'] },
  { operator: 'is later than', forms: ['is later than'] },
  { operator: 'is earlier than', forms: ['is earlier than'] },
  { operator: 'is older than', forms: ['is older than <n> <unit>'] },
  { operator: 'is younger than', forms: ['is younger than <n> <unit>'] },
  { operator: 'length of', forms: ['the length of', 'length of'] },
  { operator: 'number of', forms: ['the number of', 'number of'] },
];

/** A fresh copy of the operator list (spec §4.7 list_operators). */
export function listOperators(): { operator: string; forms: string[] }[] {
  return CATALOGUE.map((o) => ({ operator: o.operator, forms: [...o.forms] }));
}
