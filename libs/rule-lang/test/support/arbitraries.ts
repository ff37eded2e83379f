/**
 * fast-check arbitraries shared by the property tests (fuzz.test.ts, codegen-trace.test.ts): rule
 * texts (corpus policies mutated, token soup, random strings) and JSON-like data with odd keys.
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';

const casesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'cases');
/** Every valid policy of the corpus is a seed for mutation. */
export const SEEDS: string[] = [
  ...new Set(
    readdirSync(casesDir)
      .filter((f) => f.endsWith('.json'))
      .flatMap((f) => JSON.parse(readFileSync(path.join(casesDir, f), 'utf8')) as { rule: string; wantErrorCode?: string }[])
      .filter((c) => c.wantErrorCode !== 'parse_error' && c.rule.length < 600)
      .map((c) => c.rule),
  ),
];

const TOKENS = [
  'A',
  'An',
  'The',
  'a',
  'the',
  'if',
  'and',
  'or',
  'of',
  'in',
  'its',
  'any',
  'all',
  'where',
  'satisfies',
  'present',
  'true',
  'false',
  'date',
  'length',
  'number',
  'is',
  'not',
  'greater',
  'than',
  'equal',
  'to',
  'at',
  'least',
  'less',
  'no',
  'more',
  'exactly',
  'same',
  'as',
  'equals',
  'does',
  'valid',
  'email',
  'address',
  'uuid',
  'within',
  'empty',
  'later',
  'earlier',
  'older',
  'younger',
  'contains',
  'contain',
  'has',
  'have',
  'format',
  'matches',
  'match',
  'pattern',
  'passes',
  'meets',
  'requirements',
  'days',
  'years',
  'month',
  'century',
  'gets',
  'qualifies',
  'for',
  '**x**',
  '**order**',
  '**a.b**',
  '** c **',
  '__age__',
  '__date of birth__',
  '__a.b__',
  '__is_member__',
  '"gold"',
  '"^\\d{4}$"',
  '"say \\"hi\\""',
  '"email"',
  '"(a"',
  '""',
  '18',
  '-40',
  '2.5',
  '0',
  '2024-02-29',
  '2023-02-29',
  'x.a',
  'its.price',
  'order.items',
  '1.2.3',
  '$k',
  '§k',
  '$kyc.basic',
  'k.',
  'k:',
  '->',
  '>=',
  '<=',
  '==',
  '!=',
  '>',
  '<',
  '.',
  ',',
  ':',
  '(',
  ')',
  '[',
  ']',
  '#',
  '# comment\n',
  '\n',
  ' ',
  '\t',
  '*',
  '_',
  '"',
  '$',
  '§',
  '😀',
  'é',
  '\r\n',
  'date(',
  'outcome',
  'approved',
];

const token = fc.constantFrom(...TOKENS);
const anyChar = fc.oneof(
  fc.constantFrom(...'.*_"#$§()[]-:<>=!, \n\t\\'.split('')),
  fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' }),
);

type Edit =
  | { kind: 'insertChar'; at: number; text: string }
  | { kind: 'deleteChars'; at: number; count: number }
  | { kind: 'replaceChar'; at: number; text: string }
  | { kind: 'insertToken'; at: number; text: string }
  | { kind: 'replaceWord'; at: number; text: string }
  | { kind: 'deleteWord'; at: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('insertChar' as const), at: fc.nat(), text: anyChar }),
  fc.record({ kind: fc.constant('deleteChars' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('replaceChar' as const), at: fc.nat(), text: anyChar }),
  fc.record({ kind: fc.constant('insertToken' as const), at: fc.nat(), text: token.map((t) => ` ${t} `) }),
  fc.record({ kind: fc.constant('replaceWord' as const), at: fc.nat(), text: token }),
  fc.record({ kind: fc.constant('deleteWord' as const), at: fc.nat() }),
);

function applyEdit(text: string, e: Edit): string {
  const n = text.length;
  if (e.kind === 'replaceWord' || e.kind === 'deleteWord') {
    const words = text.split(/(\s+)/);
    const indexes = words.map((w, i) => (/\S/.test(w) ? i : -1)).filter((i) => i >= 0);
    if (indexes.length === 0) return text;
    const i = indexes[e.at % indexes.length];
    words[i] = e.kind === 'replaceWord' ? e.text : '';
    return words.join('');
  }
  const at = n === 0 ? 0 : e.at % (n + 1);
  switch (e.kind) {
    case 'insertChar':
    case 'insertToken':
      return text.slice(0, at) + e.text + text.slice(at);
    case 'deleteChars':
      return text.slice(0, at) + text.slice(at + e.count);
    case 'replaceChar':
      return text.slice(0, at) + e.text + text.slice(at + 1);
  }
}

/** A corpus policy with one to four random edits (usually no longer valid). */
export const mutatedText = fc
  .tuple(fc.constantFrom(...SEEDS), fc.array(edit, { minLength: 1, maxLength: 4 }))
  .map(([seed, edits]) => edits.reduce(applyEdit, seed));

const tokenSoup = fc
  .array(fc.tuple(token, fc.constantFrom(' ', ' ', ' ', '', '\n')), { minLength: 0, maxLength: 40 })
  .map((parts) => parts.map(([t, sep]) => t + sep).join(''));

/** Any rule text: mutated policies, token soup, random strings. */
export const ruleText = fc.oneof(mutatedText, mutatedText, tokenSoup, fc.string({ maxLength: 80, unit: 'grapheme' }));

// ------------------------------------------------------------------------------------------ data

const KEYS = [
  'x',
  'a',
  'b',
  'c',
  'order',
  'items',
  'price',
  'guest',
  'email',
  'dateOfBirth',
  'date_of_birth',
  'booking',
  'deposit',
  'amount',
  'nights',
  'member',
  'tier',
  'visits',
  'item',
  'v',
  'w',
  'applicant',
  'age',
  'claim',
  '__proto__',
  'constructor',
  'length',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '0',
  '',
  'Date Of Birth',
  'its',
];

const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -5, max: 300 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    '',
    'gold',
    'GOLD',
    '42',
    '7.50',
    'true',
    'False',
    '2024-02-29',
    '2025-06-01T10:00:00Z',
    '2023-02-29',
    'mara@fjordstay.example',
    '123e4567-e89b-12d3-a456-426614174000',
    'SAVE5',
    'a😀b',
    '__proto__',
  ),
  fc.string({ maxLength: 12 }),
);

/** JSON-like values whose objects use odd keys; `Object.fromEntries` makes `__proto__` an own key. */
const { value: jsonish } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { maxLength: 5 }).map((e) => Object.fromEntries(e)),
  ),
}));

/** A chain of `depth` nested objects (and arrays) under common keys (a few shared branches, no blow-up). */
const deep = fc.tuple(fc.integer({ min: 1, max: 200 }), fc.constantFrom(...KEYS), leaf).map(([depth, key, end]) => {
  let v: unknown = end;
  for (let i = 0; i < depth; i++) v = i % 7 === 3 ? [v] : i % 5 === 0 ? { [key]: v, items: [v] } : { [key]: v };
  return v;
});

const topLevel = fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.oneof(jsonish, deep)), { maxLength: 8 }).map((e) => Object.fromEntries(e));
/** Data: mostly objects with odd keys (some deep), sometimes any JSON-like value. */
export const data = fc.oneof(topLevel, topLevel, topLevel, jsonish);
