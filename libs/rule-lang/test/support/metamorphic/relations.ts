/**
 * Metamorphic relations drawn from LANGUAGE.md. Each takes one generated case and gives pairs of
 * (policy text, data) whose observable answers — result, outcomes, error code and, where the
 * relation keeps it, the error message — must relate in a stated way. None needs to know the right
 * answer: only how the two answers relate.
 */

import { renderData, renderPolicy, renderRules, type Dim, type Style } from './render.js';
import type { AVal, Atom, Cond, Lit, OpId, Operand, PolicyM, RuleM } from './model.js';

/** One generated case: a policy, its data, the writing style, a second style, the clock, a free choice. */
export interface Case {
  policy: PolicyM;
  data: AVal;
  style: Style;
  alt: Style;
  now: number;
  pick: number;
}

export interface Side {
  text: string;
  data: unknown;
  /** How to evaluate: the plain generated evaluator by default; a trace or the structured trace take other paths. */
  mode?: 'trace' | 'traceTree';
}

/** What an evaluation lets a caller observe. */
export interface Observed {
  result: boolean;
  outcomes: Record<string, boolean>;
  error?: string;
  errorCode?: string;
}

export interface Pair {
  a: Side;
  b: Side;
  /** Null when the two answers relate as they must, else why not. */
  check(a: Observed, b: Observed): string | null;
}

export interface Relation {
  name: string;
  /** What the relation says, in one line, with the LANGUAGE.md section it comes from. */
  says: string;
  pairs(c: Case): Pair[];
}

// ---------------------------------------------------------------------------------- comparisons

const json = (x: unknown) => JSON.stringify(x);

function sameOutcomes(a: Record<string, boolean>, b: Record<string, boolean>, keys?: readonly string[]): string | null {
  const ks = keys ?? [...new Set([...Object.keys(a), ...Object.keys(b)])];
  for (const k of ks) if (a[k] !== b[k]) return `outcome "${k}": ${a[k]} vs ${b[k]}`;
  return null;
}

/** Same result, outcomes and error code; with `message`, the same error message too. */
function same(message: boolean) {
  return (a: Observed, b: Observed): string | null => {
    if (a.errorCode !== b.errorCode) return `error code ${a.errorCode ?? 'none'} vs ${b.errorCode ?? 'none'}`;
    if (message && a.error !== b.error) return `error ${json(a.error)} vs ${json(b.error)}`;
    if (a.result !== b.result) return `result ${a.result} vs ${b.result}`;
    return sameOutcomes(a.outcomes, b.outcomes);
  };
}

/** For rewritings that change evaluation order: which missing value is met first may change, not whether one is. */
function sameUnlessErrors(a: Observed, b: Observed): string | null {
  if ((a.errorCode === undefined) !== (b.errorCode === undefined)) return `error ${json(a.error ?? null)} vs ${json(b.error ?? null)}`;
  if (a.errorCode !== undefined) return null;
  if (a.result !== b.result) return `result ${a.result} vs ${b.result}`;
  return sameOutcomes(a.outcomes, b.outcomes);
}

/** `Missing selector: shop owner.zip code` → `missing: shopowner.zipcode`. */
function pathText(message: string | undefined): string | undefined {
  return message
    ?.replace(/^Missing (selector|property): /, 'missing: ')
    .toLowerCase()
    .replace(/[ _]/g, '');
}

/**
 * For rewritings of how paths are written: the same answers, and errors about the same path.
 * Whether a step is written as a selector (`**…**`) or a property (`__…__`) decides only the
 * error's kind (§4.3, §4.6), and the message quotes the path as written.
 */
function samePathsAsWritten(a: Observed, b: Observed): string | null {
  if (pathText(a.error) !== pathText(b.error)) return `error ${json(a.error ?? null)} vs ${json(b.error ?? null)}`;
  if (a.result !== b.result) return `result ${a.result} vs ${b.result}`;
  return sameOutcomes(a.outcomes, b.outcomes);
}

/**
 * `part` is a policy whose rules all belong to `whole`, with `golden` (an outcome of whole) as its
 * golden rule. Every rule is evaluated (§8.4), so: whole answers without error ⇒ part answers
 * without error and with the same outcomes; part fails ⇒ whole fails.
 */
function partOf(golden: string) {
  return (whole: Observed, part: Observed): string | null => {
    if (whole.errorCode === undefined) {
      if (part.errorCode !== undefined) return `the rule alone fails (${part.error}) but the whole policy answers without error`;
      if (part.result !== whole.outcomes[golden])
        return `outcome "${golden}": ${whole.outcomes[golden]} in the whole policy vs ${part.result} evaluated alone`;
      return sameOutcomes(whole.outcomes, part.outcomes, Object.keys(part.outcomes));
    }
    return null;
  };
}

// ------------------------------------------------------------------------------------------ helpers

export function side(c: Case, policy: PolicyM = c.policy, style: Style = c.style): Side {
  return { text: renderPolicy(policy, style), data: renderData(c.data, style) };
}

/** Deterministic choices for relations, from the case's `pick`. */
function chooser(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

function mapCond(c: Cond, f: (a: Atom) => Cond): Cond {
  switch (c.k) {
    case 'and':
    case 'or':
      return { k: c.k, items: c.items.map((x) => mapCond(x, f)) };
    case 'quant':
      return f({ ...c, body: mapCond(c.body, f) });
    default:
      return f(c);
  }
}

function mapPolicy(p: PolicyM, f: (a: Atom) => Cond): PolicyM {
  return { rules: p.rules.map((r) => ({ ...r, cond: mapCond(r.cond, f) })) };
}

function refsOf(c: Cond, out = new Set<number>()): Set<number> {
  if (c.k === 'ref') out.add(c.rule);
  else if (c.k === 'and' || c.k === 'or') for (const x of c.items) refsOf(x, out);
  else if (c.k === 'quant') refsOf(c.body, out);
  return out;
}

/** Rule r and every rule it depends on. */
function closure(p: PolicyM, r: number): number[] {
  const seen = new Set<number>([r]);
  const todo = [r];
  while (todo.length) {
    for (const t of refsOf(p.rules[todo.pop()!].cond)) {
      if (seen.has(t)) continue;
      seen.add(t);
      todo.push(t);
    }
  }
  return [...seen];
}

/** The rules that depend on r, directly or not. */
function dependents(p: PolicyM, r: number): Set<number> {
  const out = new Set<number>();
  p.rules.forEach((_, i) => {
    if (i !== r && closure(p, i).includes(r)) out.add(i);
  });
  return out;
}

/** Rule r with its dependencies as a policy of its own (r golden). */
function subPolicy(p: PolicyM, r: number): PolicyM {
  const keep = closure(p, r);
  const index = new Map(keep.map((old, i) => [old, i]));
  return {
    rules: keep.map((old) => ({
      ...p.rules[old],
      cond: mapCond(p.rules[old].cond, (a) => (a.k === 'ref' ? { k: 'ref', rule: index.get(a.rule)! } : a)),
    })),
  };
}

const NEGATABLE = (c: Cond): boolean =>
  c.k === 'and' || c.k === 'or' ? c.items.every(NEGATABLE) : (c.k === 'cmp' || c.k === 'measure') && !c.present;

/** not(c) by De Morgan: and ↔ or, every comparison replaced by its negative form (§7.4). */
function dual(c: Cond): Cond {
  if (c.k === 'and' || c.k === 'or') return { k: c.k === 'and' ? 'or' : 'and', items: c.items.map(dual) };
  if (c.k === 'cmp' || c.k === 'measure') return { ...c, neg: !c.neg };
  throw new Error('not negatable');
}

/** `negated` flips outcome r; outcomes of rules that do not depend on r and the error stay the same. */
function flipped(p: PolicyM, r: number) {
  const deps = dependents(p, r);
  const name = p.rules[r].outcome;
  return (a: Observed, b: Observed): string | null => {
    if (a.errorCode !== b.errorCode || a.error !== b.error) return `error ${json(a.error ?? null)} vs ${json(b.error ?? null)}`;
    if (a.errorCode !== undefined) return null;
    if (a.outcomes[name] === b.outcomes[name]) return `outcome "${name}" is ${a.outcomes[name]} both ways`;
    if (r === 0 && a.result === b.result) return `result is ${a.result} both ways`;
    const others = p.rules.map((x, i) => (i === r || deps.has(i) ? null : x.outcome)).filter((x): x is string => x !== null);
    return sameOutcomes(a.outcomes, b.outcomes, others);
  };
}

// ------------------------------------------------------------------------------------- dates

function ymd(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Today shifted by ±n units: calendar arithmetic for months and years, clamped to the month's end (§6.5). */
export function shiftDay(now: number, n: number, unit: 'hour' | 'day' | 'week' | 'month' | 'year'): string {
  if (unit === 'hour') throw new Error('hours shift instants, not days');
  const t = new Date(now);
  const y = t.getUTCFullYear();
  const m = t.getUTCMonth();
  const d = t.getUTCDate();
  if (unit === 'day' || unit === 'week') return ymd(new Date(Date.UTC(y, m, d + n * (unit === 'week' ? 7 : 1))));
  const months = m + n * (unit === 'year' ? 12 : 1);
  const last = new Date(Date.UTC(y, months + 1, 0)).getUTCDate();
  return ymd(new Date(Date.UTC(y, months, Math.min(d, last))));
}

/** The same data with every null replaced by 0: then `if present` skips only what is absent. */
function withoutNulls(v: AVal): AVal {
  switch (v.t) {
    case 'lit':
      return v.v === null ? { t: 'lit', v: 0 } : v;
    case 'arr':
      return { t: 'arr', items: v.items.map(withoutNulls) };
    case 'obj':
      return { t: 'obj', fields: v.fields.map((f) => ({ c: f.c, v: withoutNulls(f.v) })) };
  }
}

/** The same data with every array cut to its first element, and an empty array replaced by 0. */
function singletons(v: AVal): AVal {
  switch (v.t) {
    case 'lit':
      return v;
    case 'arr':
      return v.items.length === 0 ? { t: 'lit', v: 0 } : { t: 'arr', items: [singletons(v.items[0])] };
    case 'obj':
      return { t: 'obj', fields: v.fields.map((f) => ({ c: f.c, v: singletons(f.v) })) };
  }
}

// -------------------------------------------------------------------------------------- relations

/** Rewrites the text (or data) in one dimension of the writing only. */
function rewriting(name: string, says: string, dims: Dim[], message: boolean | 'paths'): Relation {
  return {
    name,
    says,
    pairs: (c) => {
      const other: Style = { ...c.style };
      for (const d of dims) other[d] = c.alt[d];
      return [{ a: side(c), b: side(c, c.policy, other), check: message === 'paths' ? samePathsAsWritten : same(message) }];
    },
  };
}

const LABEL_SPELLINGS = [(i: number) => `renamed_${i}`, (i: number) => `x.${i}`, (i: number) => `${i + 1}.0`, (i: number) => `Rule${i}b`];

export const RELATIONS: Relation[] = [
  rewriting(
    'operator-synonyms',
    'every accepted form of an operator means the same (§7.1: `is greater than` ≡ `>`, `is` ≡ `==` ≡ `equals`, …)',
    ['ops'],
    true,
  ),
  rewriting(
    'path-notations',
    'natural navigation, dots in selector or property, mixed and bare dotted paths are equivalent (§4.2)',
    ['paths'],
    'paths',
  ),
  rewriting(
    'name-spellings',
    'a written name finds its camelCase and snake_case key whichever way it is written (§4.4)',
    ['names'],
    'paths',
  ),
  rewriting('key-spellings', 'data keys in camelCase or snake_case are found by the same written name (§4.4)', ['keys'], true),
  rewriting('data-key-order', 'the order of keys in the data changes nothing (§4.4: own keys)', ['keyOrder'], true),
  rewriting('keyword-case', 'fixed words match in any letter case (§2.3)', ['case'], true),
  rewriting(
    'whitespace-and-comments',
    'whitespace, line breaks and comments between any tokens change nothing (§2.1, §2.2, D-operator-spacing)',
    ['ws'],
    true,
  ),
  rewriting(
    'verbose-vs-shorthand',
    'a verbose rule and the shorthand rule with the same label, conditions and outcome are the same rule (§3.1, §3.2)',
    ['form'],
    true,
  ),
  rewriting(
    'reference-forms',
    '`$l` ≡ `§l` ≡ `$l is satisfied` ≡ a reference by outcome, with or without verb and article (§5.2, §5.3)',
    ['refs'],
    true,
  ),
  rewriting('outcome-verbs', 'a leading outcome verb is dropped from the outcome name (§3.4)', ['verbs'], true),
  rewriting('date-literal-forms', '`2024-01-31` ≡ `date(2024-01-31)` (§6.4)', ['dates'], true),
  rewriting('quantifier-forms', '`any of … where` ≡ `any … satisfies` (§5.5)', ['quant'], true),
  rewriting(
    'optional-articles',
    'the optional `the` and the rule article (A, An, The) change nothing (§4.2, §5.1, §3.1)',
    ['articles'],
    true,
  ),
  rewriting('explicit-grouping', '`and` binds tighter than `or`: redundant parentheses change nothing (§5.4)', ['parens'], true),
  rewriting('format-name-case', 'format names ignore letter case like fixed words (§7.3.11: `"EMAIL"` is `"email"`)', ['formatCase'], true),
  {
    name: 'evaluation-modes',
    says: 'the generated evaluator, the traced one and the closures (structured trace) give the same answers (§10: a trace only describes)',
    pairs: (c) => {
      const a = side(c);
      return [
        { a, b: { ...a, mode: 'trace' }, check: same(true) },
        { a, b: { ...a, mode: 'traceTree' }, check: same(true) },
      ];
    },
  },
  {
    name: 'rule-order',
    says: 'the text order of rules affects nothing observable, not even which error is reported (§3.5)',
    pairs: (c) => {
      const pick = chooser(c.pick);
      const order = c.policy.rules.map((_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = pick(i + 1);
        [order[i], order[j]] = [order[j], order[i]];
      }
      if (order.every((x, i) => x === i)) order.reverse();
      const b = { text: renderRules(c.policy, order, c.style), data: renderData(c.data, c.style) };
      return order.length < 2 ? [] : [{ a: side(c), b, check: same(true) }];
    },
  },
  {
    name: 'label-renaming',
    says: 'renaming a label and its references consistently changes nothing (§3.3)',
    pairs: (c) => {
      const spell = LABEL_SPELLINGS[c.pick % LABEL_SPELLINGS.length];
      if (c.policy.rules.every((r) => r.label === null)) return [];
      const renamed: PolicyM = { rules: c.policy.rules.map((r, i) => ({ ...r, label: r.label === null ? null : spell(i) })) };
      return [{ a: side(c), b: side(c, renamed), check: same(true) }];
    },
  },
  {
    name: 'negation',
    says: 'a comparison in its negative form is true exactly when the positive one is false, type mismatches included (§7.4)',
    pairs: (c) => {
      const candidates = c.policy.rules
        .map((r, i) => ((r.cond.k === 'cmp' || r.cond.k === 'measure') && NEGATABLE(r.cond) ? i : -1))
        .filter((i) => i >= 0);
      if (!candidates.length) return [];
      const r = candidates[c.pick % candidates.length];
      const negated: PolicyM = { rules: c.policy.rules.map((x, i) => (i === r ? { ...x, cond: dual(x.cond) } : x)) };
      return [{ a: side(c), b: side(c, negated), check: flipped(c.policy, r) }];
    },
  },
  {
    name: 'de-morgan',
    says: "not (a and b) ≡ not a or not b, written with negative operator forms: the rule's outcome flips (§5.4, §7.4)",
    pairs: (c) => {
      const candidates = c.policy.rules
        .map((r, i) => ((r.cond.k === 'and' || r.cond.k === 'or') && NEGATABLE(r.cond) ? i : -1))
        .filter((i) => i >= 0);
      if (!candidates.length) return [];
      const r = candidates[c.pick % candidates.length];
      const negated: PolicyM = { rules: c.policy.rules.map((x, i) => (i === r ? { ...x, cond: dual(x.cond) } : x)) };
      return [{ a: side(c), b: side(c, negated), check: flipped(c.policy, r) }];
    },
  },
  {
    name: 'periods-as-date-bounds',
    says: '`x is within P` ≡ `x >= today−P and x <= today+P`; `is older than P` ≡ `< today−P`; `is younger than P` ≡ `> today−P` (§6.5, §7.3.9, §7.3.10)',
    pairs: (c) => {
      let changed = false;
      const bound = (a: Atom & { k: 'cmp' }, op: OpId, day: string): Cond => ({
        ...a,
        op,
        neg: false,
        operand: { t: 'lit', lit: { t: 'date', v: day } },
      });
      const rewritten = mapPolicy(c.policy, (a) => {
        // Periods of hours compare instants, not days (§6.5): period-units covers them.
        if (a.k !== 'cmp' || a.neg || a.operand.t !== 'period' || a.operand.unit === 'hour') return a;
        changed = true;
        const { n, unit } = a.operand;
        const lo = shiftDay(c.now, -n, unit);
        if (a.op === 'older') return bound(a, 'lt', lo);
        if (a.op === 'younger') return bound(a, 'gt', lo);
        return { k: 'and', items: [bound(a, 'ge', lo), bound(a, 'le', shiftDay(c.now, n, unit))] };
      });
      return changed ? [{ a: side(c), b: side(c, rewritten), check: same(true) }] : [];
    },
  },
  {
    name: 'is-in-as-or',
    says: '`x is in [a, b]` ≡ `x == a or x == b`; `x is not in [a, b]` ≡ `x != a and x != b` (§7.3.5)',
    pairs: (c) => {
      let changed = false;
      const rewritten = mapPolicy(c.policy, (a) => {
        if (a.k !== 'cmp' || a.op !== 'in' || a.operand.t !== 'list' || a.operand.items.length === 0) return a;
        changed = true;
        const eq = (l: Lit): Cond => ({ ...a, op: 'eq', operand: { t: 'lit', lit: l } });
        const items = a.operand.items.map(eq);
        return items.length === 1 ? items[0] : { k: a.neg ? 'and' : 'or', items };
      });
      return changed ? [{ a: side(c), b: side(c, rewritten), check: same(true) }] : [];
    },
  },
  {
    name: 'converse',
    says: '`x > y` ≡ `y < x`, `x >= y` ≡ `y <= x`, `x is later than y` ≡ `y is earlier than x`; `==` and `is exactly` are symmetric (§7.3)',
    pairs: (c) => {
      const CONVERSE: Partial<Record<OpId, OpId>> = {
        gt: 'lt',
        lt: 'gt',
        ge: 'le',
        le: 'ge',
        eq: 'eq',
        exactly: 'exactly',
        later: 'earlier',
        earlier: 'later',
      };
      let changed = false;
      const rewritten = mapPolicy(c.policy, (a) => {
        if (a.k !== 'cmp' || a.operand.t !== 'path' || !CONVERSE[a.op]) return a;
        changed = true;
        return { ...a, path: a.operand.path, op: CONVERSE[a.op]!, operand: { t: 'path', path: a.path } };
      });
      return changed ? [{ a: side(c), b: side(c, rewritten), check: sameUnlessErrors }] : [];
    },
  },
  {
    name: 'commute-and-or',
    says: 'within one precedence level the order of conditions does not matter (§5.4)',
    pairs: (c) => {
      const rev = (x: Cond): Cond =>
        x.k === 'and' || x.k === 'or' ? { k: x.k, items: x.items.map(rev).reverse() } : x.k === 'quant' ? { ...x, body: rev(x.body) } : x;
      const rewritten: PolicyM = { rules: c.policy.rules.map((r) => ({ ...r, cond: rev(r.cond) })) };
      return [{ a: side(c), b: side(c, rewritten), check: sameUnlessErrors }];
    },
  },
  {
    name: 'unrelated-data',
    says: 'top-level data no path names changes nothing (§4.1)',
    pairs: (c) => {
      const a = side(c);
      const data = { ...(a.data as object), zz_unused: { items: [], id: null, order: 1 } };
      return [{ a, b: { text: a.text, data }, check: same(true) }];
    },
  },
  {
    name: 'if-present-when-present',
    says: '`C if present` is `C` when every value C reads is there and not null (§5.7)',
    pairs: (c) => {
      let changed = false;
      const optional = mapPolicy(c.policy, (a) => {
        if ((a.k !== 'cmp' && a.k !== 'measure' && a.k !== 'quant') || a.present || (a.k === 'cmp' && a.op === 'empty')) return a;
        changed = true;
        return { ...a, present: true };
      });
      const data = withoutNulls(c.data);
      const whenNoError = (a: Observed, b: Observed): string | null => (a.errorCode === undefined ? same(true)(a, b) : null);
      return changed ? [{ a: side({ ...c, data }), b: side({ ...c, data }, optional), check: whenNoError }] : [];
    },
  },
  {
    name: 'any-all-on-one-element',
    says: 'over an array of exactly one element `any` and `all` agree; over a non-array both are false (§5.5)',
    pairs: (c) => {
      let changed = false;
      const swapped = mapPolicy(c.policy, (a) => {
        if (a.k !== 'quant') return a;
        changed = true;
        return { ...a, q: a.q === 'any' ? 'all' : 'any' };
      });
      const data = singletons(c.data);
      return changed ? [{ a: side({ ...c, data }), b: side({ ...c, data }, swapped), check: same(true) }] : [];
    },
  },
  {
    name: 'period-units',
    says: '`n weeks` ≡ `7n days`; `n days` ≡ `24n hours`; `n years` ≡ `12n months`; `12 hours` ≡ `0.5 days` (§6.5)',
    pairs: (c) => {
      let changed = false;
      const rewritten = mapPolicy(c.policy, (a) => {
        if (a.k !== 'cmp' || a.operand.t !== 'period') return a;
        const { n, unit } = a.operand;
        const same: Operand | null =
          unit === 'week'
            ? { t: 'period', n: 7 * n, unit: 'day' }
            : unit === 'year'
              ? { t: 'period', n: 12 * n, unit: 'month' }
              : unit === 'day'
                ? { t: 'period', n: 24 * n, unit: 'hour' }
                : unit === 'hour' && n % 12 === 0
                  ? { t: 'period', n: n / 24, unit: 'day' }
                  : null;
        if (!same) return a;
        changed = true;
        return { ...a, operand: same };
      });
      return changed ? [{ a: side(c), b: side(c, rewritten), check: same(true) }] : [];
    },
  },
  {
    name: 'date-literal-as-string',
    says: 'ordering, `is later/earlier than`, `is equal to` and `is in` read a date-like string literal as the date (§7.2, §7.3.8)',
    pairs: (c) => {
      let changed = false;
      const asString = (l: Lit): Lit => {
        if (l.t !== 'date') return l;
        changed = true;
        return { t: 'str', v: l.v };
      };
      const rewritten = mapPolicy(c.policy, (a) => {
        if (a.k !== 'cmp') return a;
        if (a.operand.t === 'lit' && ['gt', 'ge', 'lt', 'le', 'later', 'earlier', 'eq'].includes(a.op))
          return { ...a, operand: { t: 'lit', lit: asString(a.operand.lit) } };
        if (a.operand.t === 'list' && a.op === 'in') return { ...a, operand: { t: 'list', items: a.operand.items.map(asString) } };
        return a;
      });
      return changed ? [{ a: side(c), b: side(c, rewritten), check: same(true) }] : [];
    },
  },
  {
    name: 'rule-evaluated-alone',
    says: 'every rule is evaluated, once, with a value that never depends on where it is referenced (§8.4): a rule and its dependencies as a policy of their own give the same outcomes, and fail if the rule fails',
    pairs: (c) =>
      c.policy.rules.slice(1).map((r, i) => ({
        a: side(c),
        b: side(c, subPolicy(c.policy, i + 1)),
        check: partOf(r.outcome),
      })),
  },
  {
    name: 'extract-rule',
    says: "moving a condition into a rule of its own and referring to it by `$label` changes no other outcome, and the new outcome is the condition's value (§5.3, §8.4)",
    pairs: (c) => {
      const found = extractionSites(c.policy);
      if (!found.length) return [];
      const site = found[c.pick % found.length];
      const n = c.policy.rules.length;
      const rules: RuleM[] = c.policy.rules.map((r, i) =>
        i === site.rule ? { ...r, cond: replaceAt(r.cond, site.at, { k: 'ref', rule: n }) } : r,
      );
      rules.push({ label: 'xr', outcome: 'extracted', subject: 'order', cond: site.cond });
      const extracted: PolicyM = { rules };
      const oldKeys = c.policy.rules.map((r) => r.outcome);
      const before = (a: Observed, b: Observed): string | null => {
        if (!site.inQuant) {
          if (a.errorCode !== b.errorCode || a.error !== b.error) return `error ${json(a.error ?? null)} vs ${json(b.error ?? null)}`;
        } else {
          // Inside any/all the condition may run for no element at all; on its own it always runs.
          if (b.errorCode === undefined && a.errorCode !== undefined) return `error ${json(a.error)} before extraction, none after`;
          if (a.errorCode !== undefined || b.errorCode !== undefined) return null;
        }
        if (a.result !== b.result) return `result ${a.result} vs ${b.result}`;
        return sameOutcomes(a.outcomes, b.outcomes, oldKeys);
      };
      return [
        { a: side(c), b: side(c, extracted), check: before },
        { a: side(c, extracted), b: side(c, subPolicy(extracted, n)), check: partOf('extracted') },
      ];
    },
  },
];

interface Site {
  rule: number;
  at: number[];
  cond: Cond;
  inQuant: boolean;
}

/** Whether c uses `its` outside any quantifier of its own (then it cannot stand alone). */
function freeIts(c: Cond): boolean {
  switch (c.k) {
    case 'and':
    case 'or':
      return c.items.some(freeIts);
    case 'cmp':
      return c.path.root === 'its' || (c.operand.t === 'path' && c.operand.path.root === 'its');
    case 'measure':
      return c.path.root === 'its';
    case 'quant':
      return c.path.root === 'its';
    case 'ref':
      return false;
  }
}

/** Every condition that could be a rule of its own, with where it is. */
function extractionSites(p: PolicyM): Site[] {
  const out: Site[] = [];
  const walk = (c: Cond, rule: number, at: number[], inQuant: boolean) => {
    if (!freeIts(c)) out.push({ rule, at, cond: c, inQuant });
    if (c.k === 'and' || c.k === 'or') c.items.forEach((x, i) => walk(x, rule, [...at, i], inQuant));
    else if (c.k === 'quant') walk(c.body, rule, [...at, 0], true);
  };
  p.rules.forEach((r, i) => walk(r.cond, i, [], false));
  return out;
}

function replaceAt(c: Cond, at: number[], by: Cond): Cond {
  if (at.length === 0) return by;
  const [i, ...rest] = at;
  if (c.k === 'and' || c.k === 'or') return { k: c.k, items: c.items.map((x, j) => (j === i ? replaceAt(x, rest, by) : x)) };
  if (c.k === 'quant') return { ...c, body: replaceAt(c.body, rest, by) };
  throw new Error('bad site');
}
