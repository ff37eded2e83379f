/**
 * The metamorphic fuzzer's model of a policy and of its data, and the fast-check arbitraries that
 * generate them. A policy is generated as a tree (rules, conditions, paths into a fixed small
 * schema of data) and only then written out as text (render.ts), so one generated policy can be
 * written many equivalent ways and transformed (relations.ts) before it is written.
 */

import fc from 'fast-check';

// -------------------------------------------------------------------------------------- the schema

/** A name made of words: `['unit', 'price']` is written `unit price`, `unit_price` or `unitPrice`. */
export type Concept = readonly string[];

/** Top-level objects of the data (selectors). */
export const SELECTORS: readonly Concept[] = [['order'], ['shop', 'owner']];

/** Property paths below a selector that conditions compare. */
export const VALUE_PATHS: readonly (readonly Concept[])[] = [
  [['id']],
  [['total']],
  [['unit', 'price']],
  [['status']],
  [['created', 'on']],
  [['tags']],
  [['address'], ['city']],
  [['address'], ['zip', 'code']],
  [['items']],
];

/** Property paths below a selector that quantifiers range over (arrays, or not, depending on the data). */
export const ARRAY_PATHS: readonly (readonly Concept[])[] = [[['items']], [['tags']], [['address']]];

/** Property paths below an array element (`its`): none is the element itself. */
export const ELEMENT_PATHS: readonly (readonly Concept[])[] = [[], [['price']], [['qty']], [['sku', 'code']]];

// ------------------------------------------------------------------------------------------ policy

export type Lit = { t: 'num'; v: number } | { t: 'str'; v: string } | { t: 'bool'; v: boolean } | { t: 'date'; v: string };

export type Operand =
  | { t: 'none' }
  | { t: 'lit'; lit: Lit }
  | { t: 'list'; items: Lit[] }
  | { t: 'path'; path: PathM }
  | { t: 'period'; n: number; unit: 'hour' | 'day' | 'week' | 'month' | 'year' }
  | { t: 'format'; name: string }
  | { t: 'pattern'; re: string };

/** A path: a selector (index into SELECTORS) or the current element, then property steps. */
export interface PathM {
  root: number | 'its';
  steps: readonly Concept[];
}

export type OpId =
  | 'gt'
  | 'ge'
  | 'lt'
  | 'le'
  | 'eq'
  | 'exactly'
  | 'in'
  | 'contains'
  | 'empty'
  | 'later'
  | 'earlier'
  | 'within'
  | 'older'
  | 'younger'
  | 'format'
  | 'pattern';

export type Atom =
  | { k: 'cmp'; path: PathM; op: OpId; neg: boolean; operand: Operand; present: boolean }
  | {
      k: 'measure';
      m: 'length' | 'number';
      path: PathM;
      op: 'gt' | 'ge' | 'lt' | 'le' | 'eq' | 'exactly';
      neg: boolean;
      n: number;
      present: boolean;
    }
  | { k: 'ref'; rule: number }
  | { k: 'quant'; q: 'any' | 'all'; path: PathM; body: Cond; present: boolean };

export type Cond = Atom | { k: 'and' | 'or'; items: Cond[] };

export interface RuleM {
  /** Null: the rule can only be referred to by its outcome. */
  label: string | null;
  /** The outcome name (no leading verb). */
  outcome: string;
  /** The verbose form's subject (never looked up). */
  subject: string;
  cond: Cond;
}

/** rules[0] is the golden rule; a rule refers only to rules after it, and every other rule is referred to. */
export interface PolicyM {
  rules: RuleM[];
}

export const OUTCOMES = ['ok', 'checked', 'approved', 'flagged', 'free shipping', 'priority handling', 'eligible for bonus'];
const SUBJECTS = ['order', 'customer', 'claim', 'shop owner'];

// ------------------------------------------------------------------------------------- arbitraries

const NUMS = [-1, 0, 1, 2, 2.5, 3];
const STRS = ['a', 'Gold', 'gold', 'b c', '2', '2025-06-15', 'x@y.example', '', 'say "hi"', 'back\\slash', 'Ünï 😀'];
const DATES = ['2025-06-10', '2025-06-15', '2024-01-01', '2025-07-20', '2024-02-29', '2025-03-31'];
export const FORMATS = ['date', 'email', 'uuid', 'ipv4', 'time', 'date-time', 'hostname', 'uri', 'ipv6'];
const PATTERNS = ['^[a-z]+$', 'G', '(?i)gold', '\\d', '^2025-'];

const lit: fc.Arbitrary<Lit> = fc.oneof(
  fc.constantFrom(...NUMS).map((v) => ({ t: 'num' as const, v })),
  fc.constantFrom(...STRS).map((v) => ({ t: 'str' as const, v })),
  fc.boolean().map((v) => ({ t: 'bool' as const, v })),
  fc.constantFrom(...DATES).map((v) => ({ t: 'date' as const, v })),
);
const list = fc.array(lit, { maxLength: 3 }).map((items) => ({ t: 'list' as const, items }));

const topPath: fc.Arbitrary<PathM> = fc
  .tuple(fc.nat(SELECTORS.length - 1), fc.constantFrom(...VALUE_PATHS))
  .map(([root, steps]) => ({ root, steps }));
const elementPath: fc.Arbitrary<PathM> = fc.constantFrom(...ELEMENT_PATHS).map((steps) => ({ root: 'its' as const, steps }));
const arrayPath: fc.Arbitrary<PathM> = fc
  .tuple(fc.nat(SELECTORS.length - 1), fc.constantFrom(...ARRAY_PATHS))
  .map(([root, steps]) => ({ root, steps }));

const num = fc.constantFrom(...NUMS).map((v): Lit => ({ t: 'num', v }));
const date = fc.constantFrom(...DATES).map((v): Lit => ({ t: 'date', v }));
const dateString = fc.constantFrom(...DATES).map((v): Lit => ({ t: 'str', v }));
const numericString = fc.constantFrom('2', '2025-06-15').map((v): Lit => ({ t: 'str', v }));

/** One candidate operand of every kind, generated side by side so each shrinks on its own. */
function operandCandidates(path: fc.Arbitrary<PathM>) {
  return fc.record({
    kind: fc.nat(5),
    num,
    date,
    dateString,
    numericString,
    lit,
    list,
    path,
    period: fc.record({
      t: fc.constant('period' as const),
      n: fc.constantFrom(0, 1, 2, 3, 10, 12, 24),
      unit: fc.constantFrom('day' as const, 'week' as const, 'month' as const, 'year' as const, 'hour' as const),
    }),
    format: fc.constantFrom(...FORMATS),
    pattern: fc.constantFrom(...PATTERNS),
  });
}
type Candidates = ReturnType<typeof operandCandidates> extends fc.Arbitrary<infer T> ? T : never;

/** The operand an operator takes (§7.1), picked from the candidates. */
function operandFor(op: OpId, c: Candidates): Operand {
  const asLit = (l: Lit): Operand => ({ t: 'lit', lit: l });
  const asPath: Operand = { t: 'path', path: c.path };
  switch (op) {
    case 'gt':
    case 'ge':
    case 'lt':
    case 'le':
      return [asLit(c.num), asLit(c.date), asLit(c.numericString), asPath][c.kind % 4];
    case 'eq':
    case 'exactly':
      return [asLit(c.lit), asLit(c.lit), c.list, asPath, asLit(c.lit)][c.kind % 5];
    case 'in':
      return [c.list, c.list, asPath][c.kind % 3];
    case 'contains':
      return [asLit(c.lit), asPath][c.kind % 2];
    case 'later':
    case 'earlier':
      return [asLit(c.date), asLit(c.dateString), asPath][c.kind % 3];
    case 'within':
    case 'older':
    case 'younger':
      return c.period;
    case 'format':
      return { t: 'format', name: c.format };
    case 'pattern':
      return { t: 'pattern', re: c.pattern };
    case 'empty':
      return { t: 'none' };
  }
}

const OP_IDS: OpId[] = [
  'gt',
  'ge',
  'lt',
  'le',
  'eq',
  'exactly',
  'in',
  'in',
  'contains',
  'empty',
  'later',
  'earlier',
  'within',
  'older',
  'younger',
  'format',
  'pattern',
];

function cmpAtom(path: fc.Arbitrary<PathM>, operandPath: fc.Arbitrary<PathM>): fc.Arbitrary<Atom> {
  return fc
    .record({ path, op: fc.constantFrom(...OP_IDS), neg: fc.boolean(), present: fc.nat(9), operand: operandCandidates(operandPath) })
    .map((a) => ({ k: 'cmp' as const, path: a.path, op: a.op, neg: a.neg, operand: operandFor(a.op, a.operand), present: a.present >= 7 }));
}

function measureAtom(path: fc.Arbitrary<PathM>): fc.Arbitrary<Atom> {
  return fc.record({
    k: fc.constant('measure' as const),
    m: fc.constantFrom('length' as const, 'number' as const),
    path,
    op: fc.constantFrom('gt' as const, 'ge' as const, 'lt' as const, 'le' as const, 'eq' as const, 'exactly' as const),
    neg: fc.boolean(),
    n: fc.constantFrom(0, 1, 2, 3),
    present: fc.nat(9).map((x) => x >= 7),
  });
}

/** A reference placeholder: `rule` is resolved to a later rule by `normalize`. */
const refAtom: fc.Arbitrary<Atom> = fc.nat(20).map((rule) => ({ k: 'ref' as const, rule }));

/** Conditions; `inQuant` allows `its` paths. */
function condArb(depth: number, inQuant: boolean): fc.Arbitrary<Cond> {
  const path = inQuant ? fc.oneof(topPath, elementPath, elementPath) : topPath;
  const atoms: fc.Arbitrary<Cond>[] = [
    cmpAtom(path, inQuant ? fc.oneof(topPath, elementPath) : topPath),
    cmpAtom(path, topPath),
    refAtom,
    measureAtom(path),
  ];
  // References inside any/all are where a rule's evaluation could come to depend on the array.
  if (inQuant) atoms.push(refAtom);
  if (depth <= 0) return fc.oneof(...atoms);
  const quant: fc.Arbitrary<Cond> = fc.record({
    k: fc.constant('quant' as const),
    q: fc.constantFrom('any' as const, 'all' as const),
    path: arrayPath,
    body: condArb(depth - 1, true),
    present: fc.boolean(),
  });
  const group: fc.Arbitrary<Cond> = fc.record({
    k: fc.constantFrom('and' as const, 'or' as const),
    items: fc.array(condArb(depth - 1, inQuant), { minLength: 2, maxLength: 3 }),
  });
  return fc.oneof({ depthSize: 'small', withCrossShrink: true }, ...atoms, quant, group, group);
}

interface RawRule {
  label: boolean;
  subject: string;
  cond: Cond;
  /** Which earlier rule refers to this one when nothing else does, and how. */
  parent: number;
  joinOr: boolean;
}

const rawRule: fc.Arbitrary<RawRule> = fc.record({
  label: fc.boolean(),
  subject: fc.constantFrom(...SUBJECTS),
  cond: condArb(2, false),
  parent: fc.nat(10),
  joinOr: fc.boolean(),
});

/** Generated policies: one to four rules, every rule but the first referred to. */
export const policyArb: fc.Arbitrary<PolicyM> = fc.array(rawRule, { minLength: 1, maxLength: 4 }).map(normalize);

/** Resolves reference placeholders to later rules and adds a reference to every rule nothing refers to. */
export function normalize(raw: RawRule[]): PolicyM {
  const n = raw.length;
  const referenced = new Set<number>();
  const resolve = (c: Cond, i: number): Cond => {
    switch (c.k) {
      case 'ref': {
        if (i >= n - 1)
          return {
            k: 'cmp',
            path: { root: 0, steps: [['id']] },
            op: 'ge',
            neg: false,
            operand: { t: 'lit', lit: { t: 'num', v: 1 } },
            present: false,
          };
        const target = i + 1 + (c.rule % (n - 1 - i));
        referenced.add(target);
        return { k: 'ref', rule: target };
      }
      case 'quant':
        return { ...c, body: resolve(c.body, i) };
      case 'and':
      case 'or':
        return { k: c.k, items: c.items.map((x) => resolve(x, i)) };
      default:
        return c;
    }
  };
  const rules: RuleM[] = raw.map((r, i) => ({
    label: r.label ? `l${i}` : null,
    outcome: OUTCOMES[i],
    subject: r.subject,
    cond: resolve(r.cond, i),
  }));
  for (let j = 1; j < n; j++) {
    if (referenced.has(j)) continue;
    const p = raw[j].parent % j;
    rules[p] = { ...rules[p], cond: { k: raw[j].joinOr ? 'or' : 'and', items: [rules[p].cond, { k: 'ref', rule: j }] } };
  }
  return { rules };
}

// -------------------------------------------------------------------------------------------- data

/** Data before its keys are spelled: objects keyed by concepts. */
export type AVal =
  { t: 'obj'; fields: { c: Concept; v: AVal }[] } | { t: 'arr'; items: AVal[] } | { t: 'lit'; v: string | number | boolean | null };

const SCALARS: (string | number | boolean | null)[] = [
  0,
  1,
  2,
  3,
  -1,
  2.5,
  '2',
  '2.5',
  'a',
  'Gold',
  'gold',
  'b c',
  '2025-06-10',
  '2025-06-15',
  '2024-01-01',
  '2025-06-16T01:30:00+02:00',
  '2025-07-20',
  true,
  false,
  null,
  'x@y.example',
  '1f0e9c2a-5b1c-4d2e-8f3a-9b8c7d6e5f40',
  '',
  'say "hi"',
  'back\\slash',
  'Ünï 😀',
];
const scalar: fc.Arbitrary<AVal> = fc.constantFrom(...SCALARS).map((v) => ({ t: 'lit' as const, v }));

function obj(fields: [Concept, fc.Arbitrary<AVal>][]): fc.Arbitrary<AVal> {
  return fc
    .tuple(
      ...fields.map(([c, a]) =>
        fc.option(
          a.map((v) => ({ c, v })),
          { freq: 8 },
        ),
      ),
    )
    .map((fs) => ({ t: 'obj' as const, fields: fs.filter((f): f is { c: Concept; v: AVal } => f !== null) }));
}

const element: fc.Arbitrary<AVal> = fc.oneof(
  {
    weight: 4,
    arbitrary: obj([
      [['price'], scalar],
      [['qty'], scalar],
      [['sku', 'code'], scalar],
    ]),
  },
  { weight: 1, arbitrary: scalar },
);
const items: fc.Arbitrary<AVal> = fc.oneof(
  { weight: 5, arbitrary: fc.array(element, { maxLength: 3 }).map((xs) => ({ t: 'arr' as const, items: xs })) },
  { weight: 1, arbitrary: scalar },
  { weight: 1, arbitrary: fc.constant<AVal>({ t: 'obj', fields: [] }) },
);
const tags: fc.Arbitrary<AVal> = fc.oneof(
  { weight: 3, arbitrary: fc.array(scalar, { maxLength: 3 }).map((xs) => ({ t: 'arr' as const, items: xs })) },
  { weight: 1, arbitrary: scalar },
);
const address: fc.Arbitrary<AVal> = fc.oneof(
  {
    weight: 4,
    arbitrary: obj([
      [['city'], scalar],
      [['zip', 'code'], scalar],
    ]),
  },
  { weight: 1, arbitrary: scalar },
);

const selectorValue: fc.Arbitrary<AVal> = obj([
  [['id'], scalar],
  [['total'], scalar],
  [['unit', 'price'], scalar],
  [['status'], scalar],
  [['created', 'on'], scalar],
  [['tags'], tags],
  [['address'], address],
  [['items'], items],
]);

/** The data: each selector present most of the time. */
export const dataArb: fc.Arbitrary<AVal> = obj(SELECTORS.map((c) => [c, selectorValue] as [Concept, fc.Arbitrary<AVal>]));
