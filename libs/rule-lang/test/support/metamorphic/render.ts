/**
 * Writes a generated policy (model.ts) as rule text, and its data as JSON. Every free choice of
 * the writing (which synonym of an operator, which path notation, letter case of fixed words,
 * whitespace and comments, verbose or shorthand rules, …) is drawn from its own seeded stream, one
 * per *dimension*: changing one dimension's seed rewrites the text in that respect only, which is
 * what most relations compare.
 */

import fc from 'fast-check';
import {
  SELECTORS,
  type AVal,
  type Atom,
  type Concept,
  type Cond,
  type Lit,
  type OpId,
  type Operand,
  type PathM,
  type PolicyM,
  type RuleM,
} from './model.js';

export const DIMS = [
  'ops',
  'paths',
  'names',
  'case',
  'ws',
  'form',
  'refs',
  'dates',
  'quant',
  'articles',
  'parens',
  'verbs',
  'formatCase',
  'keys',
  'keyOrder',
] as const;
export type Dim = (typeof DIMS)[number];
/** One seed per dimension. */
export type Style = Record<Dim, number>;

export const styleArb: fc.Arbitrary<Style> = fc.record(
  Object.fromEntries(DIMS.map((d) => [d, fc.nat()])) as Record<Dim, fc.Arbitrary<number>>,
);

/** mulberry32: small, fast, good enough to pick spellings. Seed 0 always picks the first choice: the plainest writing. */
function rng(seed: number): (n: number) => number {
  if (seed === 0) return () => 0;
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return Math.floor(r * n);
  };
}

/**
 * A choice fixed for a whole text by a dimension's seed and a key (a name, a path): every
 * occurrence of one path is written alike, so rewriting other things never changes how a path is
 * written, nor the error message that quotes it. Seed 0 gives 0.
 */
function fixedChoice(seed: number, key: string, n: number): number {
  if (seed === 0) return 0;
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0x5bd1e995) >>> 0;
  return ((h ^ (h >>> 15)) >>> 0) % n;
}

/** Operator phrases (LANGUAGE.md §7.1): positive forms, negative forms. */
export const OP_FORMS: Record<Exclude<OpId, 'format' | 'pattern'>, { pos: string[]; neg: string[] }> = {
  gt: { pos: ['is greater than', '>'], neg: ['is not greater than'] },
  ge: { pos: ['is greater than or equal to', 'is at least', '>='], neg: ['is not greater than or equal to', 'is not at least'] },
  lt: { pos: ['is less than', '<'], neg: ['is not less than'] },
  le: { pos: ['is no more than', 'is less than or equal to', '<='], neg: ['is not less than or equal to'] },
  eq: {
    pos: ['is equal to', 'is', 'equals', '==', 'is the same as'],
    neg: ['is not equal to', 'is not', 'does not equal', 'is not the same as', '!='],
  },
  exactly: { pos: ['is exactly', 'is exactly equal to'], neg: ['is not exactly', 'is not exactly equal to'] },
  in: { pos: ['is in'], neg: ['is not in'] },
  contains: { pos: ['contains'], neg: ['does not contain'] },
  empty: { pos: ['is empty'], neg: ['is not empty'] },
  later: { pos: ['is later than'], neg: ['is not later than'] },
  earlier: { pos: ['is earlier than'], neg: ['is not earlier than'] },
  within: { pos: ['is within'], neg: ['is not within'] },
  older: { pos: ['is older than'], neg: ['is not older than'] },
  younger: { pos: ['is younger than'], neg: ['is not younger than'] },
};

/** Formats with a word form: `is a valid email` ≡ `has the format "email"` (§7.3.11). */
const VALID_FORMS: Record<string, { pos: string[]; neg: string[] }> = {
  email: { pos: ['is a valid email', 'is a valid email address'], neg: ['is not a valid email', 'is not a valid email address'] },
  uuid: { pos: ['is a valid uuid'], neg: ['is not a valid uuid'] },
  date: { pos: ['is a valid date'], neg: ['is not a valid date'] },
};

const OUTCOME_VERBS = ['', '', 'gets', 'earns', 'receives', 'is', 'qualifies for'];
const REF_VERBS = ['', 'passes', 'meets', 'has', 'gets'];
const LABEL_PREDICATES = ['', '', 'is satisfied', 'passes', 'clears', 'is valid', 'meets requirements'];

export function camel(words: Concept): string {
  return words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('');
}
export function snake(words: Concept): string {
  return words.map((w) => w.toLowerCase()).join('_');
}

/** Policy text for a model, written with the choices of `style`. */
export function renderPolicy(policy: PolicyM, style: Style): string {
  const w = new Writer(style);
  const order = policy.rules.map((_, i) => i);
  return order.map((i) => w.rule(policy, policy.rules[i])).join('\n');
}

/** Writes rules with the rules' order as given; `renderRules` lets relations reorder. */
export function renderRules(policy: PolicyM, order: readonly number[], style: Style): string {
  const w = new Writer(style);
  return order.map((i) => w.rule(policy, policy.rules[i])).join('\n');
}

class Writer {
  private readonly r: Record<Dim, (n: number) => number>;
  constructor(private readonly style: Style) {
    this.r = Object.fromEntries(DIMS.map((d) => [d, rng(style[d])])) as Record<Dim, (n: number) => number>;
  }

  private pick<T>(dim: Dim, xs: readonly T[]): T {
    return xs[this.r[dim](xs.length)];
  }

  /** A fixed word in some letter case (§2.3). */
  private kw(word: string): string {
    switch (this.r.case(8)) {
      case 6:
        return word.toUpperCase();
      case 7:
        return word[0].toUpperCase() + word.slice(1);
      default:
        return word;
    }
  }

  /** Each word of a phrase is its own token, so whitespace and comments may separate them. */
  private phrase(text: string): string[] {
    return text.split(' ').map((x) => (/^[a-z]/.test(x) ? this.kw(x) : x));
  }

  private the(): string[] {
    return this.r.articles(2) === 0 ? [this.kw('the')] : [];
  }

  private name(c: Concept, bare: boolean): string {
    const choice = fixedChoice(this.style.names, c.join(' '), 3);
    if (c.length === 1) return choice === 2 ? c[0][0].toUpperCase() + c[0].slice(1) : c[0];
    if (choice === 1) return camel(c);
    if (choice === 0 && !bare) return c.join(' ');
    return snake(c);
  }

  private ofIn(): string {
    return this.kw(this.r.paths(3) === 0 ? 'in' : 'of');
  }

  /**
   * `propertySteps`: write every step after the root as a property. `is empty` treats an absent
   * property as empty but an absent selector step as an error (§4.3, §7.3.7), so for it the
   * notations that write inner steps as selectors (`**order.address**`, `**address** in`) are
   * not equivalent to the others.
   */
  path(p: PathM, propertySteps = false): string[] {
    const chosen = fixedChoice(this.style.paths, `${p.root}/${p.steps.map((s) => s.join(' ')).join('/')}`, 5);
    const notation = propertySteps && (chosen === 1 || chosen === 3) ? chosen - 1 : chosen;
    if (p.root === 'its') {
      if (p.steps.length === 0) return [this.kw('its')];
      const [step] = p.steps;
      const form = notation % 3;
      if (form === 0) return [this.kw('its'), `__${this.name(step, false)}__`];
      if (form === 1) return [`${this.kw('its')}.${this.name(step, true)}`];
      return [`__${this.name(step, false)}__`, this.ofIn(), this.kw('its')];
    }
    const bare = notation === 4;
    const root = this.name(SELECTORS[p.root], bare);
    const steps = p.steps.map((s) => this.name(s, bare));
    const n = steps.length;
    switch (notation) {
      case 0: {
        // natural navigation, properties as steps
        const out = [`__${steps[n - 1]}__`];
        for (let i = n - 2; i >= 0; i--) out.push(this.ofIn(), ...this.the(), `__${steps[i]}__`);
        out.push(this.ofIn(), ...this.the(), `**${root}**`);
        return out;
      }
      case 1:
        // dots in the selector
        return [`__${steps[n - 1]}__`, this.ofIn(), ...this.the(), `**${[root, ...steps.slice(0, -1)].join('.')}**`];
      case 2:
        // dots inside the property
        return [`__${steps.join('.')}__`, this.ofIn(), ...this.the(), `**${root}**`];
      case 3: {
        // natural navigation, steps as selectors
        const out = [`__${steps[n - 1]}__`];
        for (let i = n - 2; i >= 0; i--) out.push(this.ofIn(), ...this.the(), `**${steps[i]}**`);
        out.push(this.ofIn(), ...this.the(), `**${root}**`);
        return out;
      }
      default:
        return [[root, ...steps].join('.')];
    }
  }

  private lit(l: Lit): string[] {
    switch (l.t) {
      case 'num':
        return [String(l.v)];
      case 'str':
        // Only \" and \\ are escapes in a string literal (§2.4).
        return [`"${l.v.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`];
      case 'bool':
        return [this.kw(String(l.v))];
      case 'date':
        return this.r.dates(2) === 0 ? [l.v] : [this.kw('date'), '(', l.v, ')'];
    }
  }

  private operand(o: Operand): string[] {
    switch (o.t) {
      case 'none':
      case 'format':
      case 'pattern':
        return [];
      case 'lit':
        return this.lit(o.lit);
      case 'list':
        return ['[', ...o.items.flatMap((l, i) => (i === 0 ? this.lit(l) : [',', ...this.lit(l)])), ']'];
      case 'path':
        return [...this.the(), ...this.path(o.path)];
      case 'period':
        return [String(o.n), this.kw(o.unit + (this.r.ops(2) === 0 ? 's' : ''))];
    }
  }

  private formatName(name: string): string {
    switch (this.r.formatCase(3)) {
      case 1:
        return name.toUpperCase();
      case 2:
        return name[0].toUpperCase() + name.slice(1);
      default:
        return name;
    }
  }

  private opWords(op: OpId, neg: boolean, operand: Operand): string[] {
    if (op === 'pattern' && operand.t === 'pattern')
      return [...this.phrase(neg ? 'does not match pattern' : 'matches pattern'), `"${operand.re}"`];
    if (op === 'format' && operand.t === 'format') {
      const words = VALID_FORMS[operand.name];
      const written = this.formatName(operand.name);
      if (words && this.r.ops(2) === 0) return this.phrase(this.pick('ops', neg ? words.neg : words.pos));
      return [...this.phrase(neg ? 'does not have the format' : 'has the format'), `"${written}"`];
    }
    const forms = OP_FORMS[op as Exclude<OpId, 'format' | 'pattern'>];
    return this.phrase(this.pick('ops', neg ? forms.neg : forms.pos));
  }

  private present(p: boolean): string[] {
    return p ? [this.kw('if'), this.kw('present')] : [];
  }

  private atom(a: Atom, policy: PolicyM): string[] {
    switch (a.k) {
      case 'cmp':
        return [
          ...this.the(),
          ...this.path(a.path, a.op === 'empty'),
          ...this.opWords(a.op, a.neg, a.operand),
          ...this.operand(a.operand),
          ...this.present(a.present),
        ];
      case 'measure':
        return [
          ...this.the(),
          this.kw(a.m),
          this.kw('of'),
          ...this.the(),
          ...this.path(a.path),
          ...this.opWords(a.op, a.neg, { t: 'none' }),
          String(a.n),
          ...this.present(a.present),
        ];
      case 'quant': {
        const form = this.r.quant(4);
        return [
          this.kw(a.q),
          ...(form % 2 === 0 ? [this.kw('of')] : []),
          ...this.the(),
          ...this.path(a.path),
          this.kw(form < 2 ? 'where' : 'satisfies'),
          '(',
          ...this.cond(a.body, null, policy),
          ')',
          ...this.present(a.present),
        ];
      }
      case 'ref':
        return this.ref(policy.rules[a.rule]);
    }
  }

  private ref(target: RuleM): string[] {
    const byOutcome = target.label === null || this.r.refs(3) === 0;
    if (!byOutcome) {
      const sigil = this.r.refs(3) === 0 ? '§' : '$';
      const predicate = this.pick('refs', LABEL_PREDICATES);
      return [`${sigil}${target.label}`, ...(predicate ? this.phrase(predicate) : [])];
    }
    const verb = this.pick('refs', REF_VERBS);
    const article = this.r.refs(2) === 0 ? ['the'] : [];
    return [...this.the(), `**${target.subject}**`, ...(verb ? [verb] : []), ...article, ...target.outcome.split(' ')];
  }

  private cond(c: Cond, parent: 'and' | 'or' | null, policy: PolicyM): string[] {
    const explicit = this.r.parens(3) === 0;
    if (c.k !== 'and' && c.k !== 'or') {
      const tokens = this.atom(c as Atom, policy);
      return explicit && parent !== null && this.r.parens(2) === 0 ? ['(', ...tokens, ')'] : tokens;
    }
    const inner = c.items.flatMap((x, i) => (i === 0 ? this.cond(x, c.k, policy) : [this.kw(c.k), ...this.cond(x, c.k, policy)]));
    const needed = parent === 'and' && c.k === 'or';
    return needed || (explicit && parent !== null) ? ['(', ...inner, ')'] : inner;
  }

  rule(policy: PolicyM, rule: RuleM): string {
    const verb = this.pick('verbs', OUTCOME_VERBS);
    const outcome = [...(verb ? [verb] : []), ...rule.outcome.split(' ')];
    const cond = this.cond(rule.cond, null, policy);
    const tokens =
      this.r.form(2) === 0
        ? [
            ...(rule.label ? [`${rule.label}.`] : []),
            this.kw(this.pick('articles', ['A', 'An', 'The'])),
            `**${rule.subject}**`,
            ...outcome,
            this.kw('if'),
            ...cond,
            '.',
          ]
        : [...(rule.label ? [`${rule.label}:`] : []), this.kw('if'), ...cond, '->', ...outcome, '.'];
    return tokens.map((t, i) => (i === 0 ? t : this.sep() + t)).join('');
  }

  private sep(): string {
    switch (this.r.ws(10)) {
      case 7:
        return '\n  ';
      case 8:
        return '\t';
      case 9:
        return ' # note\n';
      default:
        return ' ';
    }
  }
}

/** JSON data for the abstract data, keys spelled (camelCase or snake_case) and ordered by `style`. */
export function renderData(v: AVal, style: Style): unknown {
  const keys = rng(style.keys);
  const order = rng(style.keyOrder);
  const go = (x: AVal): unknown => {
    switch (x.t) {
      case 'lit':
        return x.v;
      case 'arr':
        return x.items.map(go);
      case 'obj': {
        const entries = x.fields.map((f) => [f.c.length === 1 ? f.c[0] : keys(2) === 0 ? camel(f.c) : snake(f.c), go(f.v)] as const);
        for (let i = entries.length - 1; i > 0; i--) {
          const j = order(i + 1);
          [entries[i], entries[j]] = [entries[j], entries[i]];
        }
        return Object.fromEntries(entries);
      }
    }
  };
  return go(v);
}
