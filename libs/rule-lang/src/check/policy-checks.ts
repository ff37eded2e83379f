/**
 * Static checks of a policy that parses and checks (warnings, never parse errors): conditions whose
 * result does not depend on the data (`constant_condition`), and conditions joined by `and` on the
 * same path that cannot all hold (`contradiction`). The reasoning is conservative: a finding is
 * reported only when the operator semantics (operators/semantics.ts, values/equality.ts) make it
 * certain for every data object; anything it cannot decide is left alone.
 *
 * A rule that no other rule references is not a warning here: the language makes a second
 * unreferenced rule the parse error `multiple golden rules` (docs/LANGUAGE.md §3.6), so every rule
 * of a policy that checks is reachable from the golden rule.
 *
 * The work is counted (conditions and constraints looked at), so any policy finishes in bounded time;
 * past the bound the result says the checks are incomplete.
 */

import type { ComparisonCondition, Condition, ConditionList, Literal, Path, PolicyAst, Span } from '../ast/types.js';
import { toNumber } from '../values/numbers.js';
import { dayFromDateText, toDay } from '../values/dates.js';
import { booleanLike } from '../values/equality.js';
import { check } from '../compile/compile.js';
import { Work } from './work.js';

export type PolicyCheckKind = 'constant_condition' | 'contradiction';

/** One finding; `line`/`column` (from 1, columns in code points) point at `text`, the condition as written. */
export interface PolicyCheck {
  check: PolicyCheckKind;
  severity: 'warning' | 'error';
  message: string;
  line: number;
  column: number;
  text: string;
}

export interface PolicyChecks {
  checks: PolicyCheck[];
  /** False when the work bound stopped the checks: a finding may be missing, none is wrong. */
  complete: boolean;
}

/** Units of work (conditions, constraints and list items looked at) one policy's checks may spend. */
export const POLICY_CHECK_WORK = 200_000;

/**
 * The static checks of a policy text. Throws RuleParseError when the text does not parse or check
 * (those problems are reported as they are today).
 */
export function policyChecks(text: string, workLimit = POLICY_CHECK_WORK): PolicyChecks {
  return policyChecksOf(check(text).ast, text, workLimit);
}

/** The static checks of a checked policy's AST; `text` is the policy it was built from. */
export function policyChecksOf(ast: PolicyAst, text: string, workLimit = POLICY_CHECK_WORK): PolicyChecks {
  const run = new Checker(Array.from(text), workLimit);
  for (const rule of ast.rules) {
    if (!run.list(rule.conditions)) break;
  }
  run.checks.sort((a, b) => a.line - b.line || a.column - b.column);
  return { checks: run.checks, complete: !run.stopped };
}

type Domain = 'number' | 'day' | 'text';

/** What one condition says about the value at its key, in one domain. */
type Constraint =
  | { kind: 'bound'; side: 'lo' | 'hi'; value: number; strict: boolean }
  | { kind: 'allowed'; values: (number | string)[] }
  | { kind: 'excluded'; values: (number | string)[] };

interface Atom {
  key: string;
  domain: Domain;
  constraint: Constraint;
  cond: ComparisonCondition;
}

const ORDERINGS: Readonly<Record<string, { side: 'lo' | 'hi'; strict: boolean }>> = {
  'is greater than': { side: 'lo', strict: true },
  'is greater than or equal to': { side: 'lo', strict: false },
  'is less than': { side: 'hi', strict: true },
  'is no more than': { side: 'hi', strict: false },
};

/** Operators that are false whenever both sides are the same value (strict orderings of numbers or days). */
const IRREFLEXIVE = new Set(['is greater than', 'is less than', 'is later than', 'is earlier than']);

/**
 * The domain and value a literal pins under loose equality (values/equality.ts): numbers by
 * `toNumber`, dates by day, other strings by lower case; null for literals whose matches cross
 * domains (booleans, boolean-like strings, date-like text that is not a date literal).
 */
function equalityValue(lit: Literal, inList: boolean): { domain: Domain; value: number | string } | null {
  switch (lit.kind) {
    case 'number':
      return { domain: 'number', value: lit.value };
    case 'date': {
      const day = dayFromDateText(lit.text);
      return Number.isNaN(day) ? null : { domain: 'day', value: day };
    }
    case 'string': {
      const n = toNumber(lit.value);
      // In a list a numeric string also matches non-numeric text equal to it; only plain literals there.
      if (!Number.isNaN(n)) return inList ? null : { domain: 'number', value: n };
      if (!Number.isNaN(toDay(lit.value)) || booleanLike(lit.value) !== -1) return null;
      return { domain: 'text', value: lit.value.toLowerCase() };
    }
    case 'boolean':
      return null;
  }
}

/** The ordering domain and value of a literal (operators/semantics.ts orderingAgainstLiteral). */
function orderingValue(lit: Literal): { domain: Domain; value: number } | null {
  if (lit.kind === 'number') return { domain: 'number', value: lit.value };
  if (lit.kind === 'string') {
    const n = toNumber(lit.value);
    return Number.isNaN(n) ? null : { domain: 'number', value: n };
  }
  if (lit.kind === 'date') {
    const day = dayFromDateText(lit.text);
    return Number.isNaN(day) ? null : { domain: 'day', value: day };
  }
  return null;
}

function pathKey(path: Path): string {
  return JSON.stringify([path.root, ...path.steps.map((s) => s.name)]);
}

function pathName(path: Path): string {
  const steps = path.steps.map((s) => s.name).join('.');
  return path.root === 'its' ? (steps ? `its.${steps}` : 'its') : steps;
}

function samePath(a: Path, b: Path): boolean {
  return a.root === b.root && a.steps.length === b.steps.length && a.steps.every((s, i) => s.name === b.steps[i].name);
}

/** The constraints one comparison puts on its left value; empty when it says nothing certain. */
function atomsOf(c: ComparisonCondition): Atom[] {
  // `if present` makes a condition true when the value is missing: it constrains nothing for sure.
  if (c.optional || c.right === null) return [];
  const key = (c.measure ? `${c.measure} of ` : '') + pathKey(c.left);
  const name = c.op.name;
  const right = c.right;
  if (name in ORDERINGS && !c.op.negated && right.kind === 'literal') {
    const v = orderingValue(right.literal);
    if (!v) return [];
    const { side, strict } = ORDERINGS[name];
    return [{ key, domain: v.domain, constraint: { kind: 'bound', side, value: v.value, strict }, cond: c }];
  }
  const equality = name === 'is equal to' && right.kind === 'literal';
  const membership = name === 'is in' && right.kind === 'list' && right.items.length > 0;
  if (!equality && !membership) return [];
  const lits = right.kind === 'literal' ? [right.literal] : right.kind === 'list' ? right.items : [];
  const values = lits.map((l) => equalityValue(l, membership));
  if (values.some((v) => v === null)) return [];
  const domain = values[0]!.domain;
  if (values.some((v) => v!.domain !== domain)) return [];
  const list = values.map((v) => v!.value);
  return [{ key, domain, constraint: c.op.negated ? { kind: 'excluded', values: list } : { kind: 'allowed', values: list }, cond: c }];
}

/** What the `and`-joined conditions seen so far say about one key in one domain. */
class DomainState {
  lo: { value: number; strict: boolean; cond: ComparisonCondition } | null = null;
  hi: { value: number; strict: boolean; cond: ComparisonCondition } | null = null;
  allowed: { values: Set<number | string>; conds: ComparisonCondition[] } | null = null;
  excluded = new Map<number | string, ComparisonCondition>();

  /** Adds a constraint; returns the earlier conditions it cannot hold with, or null while it can. */
  add(constraint: Constraint, cond: ComparisonCondition, work: Work): ComparisonCondition[] | null {
    switch (constraint.kind) {
      case 'bound': {
        const { side, value, strict } = constraint;
        const old = this[side];
        const tighter =
          old === null || (side === 'lo' ? value > old.value : value < old.value) || (value === old.value && strict && !old.strict);
        if (tighter) this[side] = { value, strict, cond };
        break;
      }
      case 'allowed': {
        const next = new Set(constraint.values);
        if (this.allowed === null) this.allowed = { values: next, conds: [cond] };
        else {
          work.spend(this.allowed.values.size);
          this.allowed = { values: new Set([...this.allowed.values].filter((v) => next.has(v))), conds: [...this.allowed.conds, cond] };
        }
        break;
      }
      case 'excluded':
        for (const v of constraint.values) if (!this.excluded.has(v)) this.excluded.set(v, cond);
        break;
    }
    work.spend(constraint.kind === 'bound' ? 1 : constraint.values.length);
    return this.conflict(cond);
  }

  private inBounds(v: number | string): boolean {
    if (typeof v !== 'number') return true;
    if (this.lo && (v < this.lo.value || (this.lo.strict && v === this.lo.value))) return false;
    if (this.hi && (v > this.hi.value || (this.hi.strict && v === this.hi.value))) return false;
    return true;
  }

  private conflict(latest: ComparisonCondition): ComparisonCondition[] | null {
    const { lo, hi } = this;
    if (lo && hi && (lo.value > hi.value || (lo.value === hi.value && (lo.strict || hi.strict)))) return others([lo.cond, hi.cond], latest);
    if (this.allowed) {
      const left = [...this.allowed.values].filter((v) => this.inBounds(v) && !this.excluded.has(v));
      if (left.length > 0) return null;
      const involved = [...this.allowed.conds];
      if (lo) involved.push(lo.cond);
      if (hi) involved.push(hi.cond);
      for (const v of this.allowed.values) {
        const by = this.excluded.get(v);
        if (by) involved.push(by);
      }
      return others(involved, latest);
    }
    if (lo && hi && lo.value === hi.value) {
      const by = this.excluded.get(lo.value);
      if (by) return others([lo.cond, hi.cond, by], latest);
    }
    return null;
  }
}

/** The conditions involved other than `latest`, each once, in text order. */
function others(involved: ComparisonCondition[], latest: ComparisonCondition): ComparisonCondition[] {
  const seen = new Set<ComparisonCondition>([latest]);
  const out: ComparisonCondition[] = [];
  for (const c of involved) {
    if (!seen.has(c)) {
      seen.add(c);
      out.push(c);
    }
  }
  return out.sort((a, b) => a.span.offset - b.span.offset);
}

class Checker {
  readonly checks: PolicyCheck[] = [];
  private readonly work: Work;

  constructor(
    private readonly chars: string[],
    limit: number,
  ) {
    this.work = new Work(limit);
  }

  get stopped(): boolean {
    return this.work.stopped;
  }

  private textOf(span: Span): string {
    return this.chars.slice(span.offset, span.offset + span.length).join('');
  }

  private report(check: PolicyCheckKind, cond: Condition, message: string): void {
    this.checks.push({ check, severity: 'warning', message, line: cond.span.line, column: cond.span.column, text: this.textOf(cond.span) });
  }

  /** Checks a condition list and everything nested in it; false when the work ran out. */
  list(list: ConditionList): boolean {
    for (const c of list.items) {
      if (!this.work.spend(1)) return false;
      if (c.kind === 'comparison') this.constant(c);
      else if ((c.kind === 'group' || c.kind === 'quantifier') && !this.list(c.body)) return false;
    }
    // `and` binds more tightly than `or` (docs/LANGUAGE.md §5.4): each run of `and`-joined items is one conjunction.
    let run: Condition[] = [];
    for (let i = 0; i < list.items.length; i++) {
      run.push(list.items[i]);
      if (i === list.ops.length || list.ops[i] === 'or') {
        if (run.length > 1 && !this.conjunction(run)) return false;
        run = [];
      }
    }
    return true;
  }

  /** A comparison whose result does not depend on the value it reads. */
  private constant(c: ComparisonCondition): void {
    const right = c.right;
    if (right?.kind === 'list' && right.items.length === 0 && c.op.name === 'is in') {
      if (c.op.negated) this.report('constant_condition', c, `\`${this.textOf(c.span)}\` is always true: nothing is in an empty list`);
      else if (!c.optional) this.report('constant_condition', c, `\`${this.textOf(c.span)}\` is always false: nothing is in an empty list`);
      return;
    }
    if (right?.kind === 'path' && c.measure === null && samePath(c.left, right.path) && IRREFLEXIVE.has(c.op.name)) {
      const why = `both sides read the same value, ${pathName(c.left)}, and no value is ${c.op.name.replace(/^is /, '')} itself`;
      if (c.op.negated) this.report('constant_condition', c, `\`${this.textOf(c.span)}\` is always true: ${why}`);
      else if (!c.optional) this.report('constant_condition', c, `\`${this.textOf(c.span)}\` is always false: ${why}`);
    }
  }

  /** The comparisons of an `and` run, groups without `or` taken in; reports the first conflict per key and domain. */
  private conjunction(run: Condition[]): boolean {
    const comparisons: ComparisonCondition[] = [];
    const take = (c: Condition): boolean => {
      if (!this.work.spend(1)) return false;
      if (c.kind === 'comparison') comparisons.push(c);
      else if (c.kind === 'group' && c.body.ops.every((op) => op === 'and')) return c.body.items.every(take);
      return true;
    };
    if (!run.every(take)) return false;
    const states = new Map<string, DomainState | 'reported'>();
    for (const c of comparisons) {
      for (const atom of atomsOf(c)) {
        const id = `${atom.domain}:${atom.key}`;
        let state = states.get(id);
        if (state === 'reported') continue;
        if (!state) states.set(id, (state = new DomainState()));
        const conflict = state.add(atom.constraint, c, this.work);
        if (this.work.stopped) return false;
        if (conflict) {
          states.set(id, 'reported');
          const path = (c.measure ? `the ${c.measure} of ` : '') + pathName(c.left);
          const with_ = conflict.map((o) => `\`${this.textOf(o.span)}\``).join(' and ');
          this.report(
            'contradiction',
            c,
            `\`${this.textOf(c.span)}\` cannot hold together with ${with_}: no value of ${path} satisfies them all, so the conditions joined by \`and\` are always false`,
          );
        }
      }
    }
    return true;
  }
}
