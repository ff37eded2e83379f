/**
 * Static checks of decision tables: one table per check, broken and clean; every example input is
 * run through the table itself, so a reported overlap or gap is shown to be real, not asserted.
 */

import type { FlowTableNode } from '@arbiter/contracts';
import { StepBudget } from '@arbiter/rule-lang';
import { describe, expect, it } from 'vitest';
import { checkTable, compileTable, evaluateTable, type TableCheck } from '../src/index.js';
import { tableSpace } from '../src/table/cell-sets.js';

type Rule = FlowTableNode['rules'][number];

function table(
  hitPolicy: FlowTableNode['hitPolicy'],
  inputs: string[],
  rules: Array<[string[], Record<string, string | number>]>,
  outputs?: FlowTableNode['outputs'],
): FlowTableNode {
  return {
    type: 'table',
    hitPolicy,
    inputs: inputs.map((path, i) => ({ name: `in${i}`, path })),
    outputs: outputs ?? [{ name: 'out' }],
    rules: rules.map(([when, then]): Rule => ({ when, then })),
  };
}

const kinds = (checks: TableCheck[]) => checks.map((c) => c.check);

/** Which rules (numbered from 1) match `data`, by the table's own evaluation under `rule order`. */
function matching(node: FlowTableNode, data: Record<string, unknown>): number[] {
  const compiled = compileTable('probe', { ...node, hitPolicy: 'rule order' });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  const outcome = evaluateTable('probe', compiled.table, data, new StepBudget(1_000_000), { trace: false });
  if (outcome.error !== undefined) throw new Error(outcome.error);
  return outcome.matched.map((r) => r + 1);
}

describe('overlaps under `unique`', () => {
  const broken = table(
    'unique',
    ['applicant.age', 'applicant.country'],
    [
      [['< 18', '-'], { out: 'minor' }],
      [['>= 18', '"NL"'], { out: 'nl' }],
      [['>= 65', '-'], { out: 'senior' }],
    ],
  );

  it('names both rules and gives an input both match (an error)', () => {
    const { checks, complete } = checkTable('t', broken);
    expect(complete).toBe(true);
    // (and a gap: an adult outside the Netherlands under 65 matches no rule)
    expect(kinds(checks)).toEqual(['overlap', 'gap']);
    expect(checks[0]).toMatchObject({ check: 'overlap', severity: 'error', rules: [2, 3], path: 'nodes.t.rules.2' });
    expect(checks[0].message).toBe('table `t`: rules 2 and 3 both match one input, which the `unique` hit policy forbids');
    expect(matching(broken, checks[0].example!)).toEqual([2, 3]);
  });

  it('finds none when the ranges meet without overlapping', () => {
    const clean = table(
      'unique',
      ['applicant.age', 'applicant.country'],
      [
        [['< 18', '-'], { out: 'minor' }],
        [['>= 18', '"NL"'], { out: 'nl' }],
        [['>= 18', 'is not in ["NL"]'], { out: 'other' }],
      ],
    );
    expect(checkTable('t', clean).checks).toEqual([]);
  });

  it('reads two inputs on one path as one range (`>= 25` and `<= 60`)', () => {
    const ranges = table(
      'unique',
      ['person.age', 'person.age'],
      [
        [['< 25', '-'], { out: 'young' }],
        [['>= 25', '<= 60'], { out: 'middle' }],
        [['> 60', '-'], { out: 'old' }],
      ],
    );
    expect(checkTable('t', ranges).checks).toEqual([]);
  });
});

describe('conflicts under `any`', () => {
  it('reports rules that overlap with different outputs, not those that agree', () => {
    const node = table(
      'any',
      ['order.total'],
      [
        [['>= 100'], { out: 'free' }],
        [['>= 200'], { out: 'free' }],
        [['> 150'], { out: 'paid' }],
      ],
    );
    const { checks } = checkTable('t', node);
    expect(kinds(checks)).toEqual(['conflict', 'conflict', 'gap']);
    expect(checks.map((c) => c.rules)).toEqual([[1, 3], [2, 3], []]);
    for (const c of checks.slice(0, 2)) expect(matching(node, c.example!)).toEqual(expect.arrayContaining(c.rules));
    expect(matching(node, checks[2].example!)).toEqual([]);
  });
});

describe('gaps', () => {
  it('shows an input no rule matches (a warning)', () => {
    const node = table(
      'first',
      ['loan.amount', 'loan.currency'],
      [
        [['< 1000', '"EUR"'], { out: 'small' }],
        [['>= 1000', '["EUR", "USD"]'], { out: 'large' }],
      ],
    );
    const { checks } = checkTable('t', node);
    expect(kinds(checks)).toEqual(['gap']);
    expect(checks[0]).toMatchObject({
      severity: 'warning',
      message: 'table `t`: no rule matches some inputs, and no output has a default',
    });
    expect(matching(node, checks[0].example!)).toEqual([]);
  });

  it('finds a gap in a numeric range between two rules, on whole dates too', () => {
    const numbers = table(
      'unique',
      ['x.n'],
      [
        [['< 10'], { out: 'a' }],
        [['> 10'], { out: 'b' }],
      ],
    );
    const gap = checkTable('t', numbers).checks;
    expect(gap[0]?.example).toEqual({ x: { n: 10 } });
    const days = table(
      'unique',
      ['x.d'],
      [
        [['is earlier than 2024-01-01'], { out: 'a' }],
        [['is later than 2024-01-01'], { out: 'b' }],
      ],
    );
    expect(checkTable('t', days).checks[0]?.example).toEqual({ x: { d: '2024-01-01' } });
    const adjacent = table(
      'unique',
      ['x.d'],
      [
        [['is no more than 2024-01-01'], { out: 'a' }],
        [['is later than 2024-01-01'], { out: 'b' }],
      ],
    );
    expect(checkTable('t', adjacent).checks).toEqual([]);
  });

  it('reports none when an output has a default, or a catch-all rule ends the table', () => {
    const rules: Array<[string[], Record<string, string>]> = [[['< 1000'], { out: 'small' }]];
    expect(checkTable('t', table('first', ['loan.amount'], rules, [{ name: 'out', default: 'none' }])).checks).toEqual([]);
    expect(checkTable('t', table('first', ['loan.amount'], [...rules, [['-'], { out: 'rest' }]])).checks).toEqual([]);
  });

  it('covers booleans both ways', () => {
    const node = table(
      'unique',
      ['user.admin'],
      [
        [['true'], { out: 'a' }],
        [['false'], { out: 'b' }],
      ],
    );
    expect(checkTable('t', node).checks).toEqual([]);
    const half = table('unique', ['user.admin'], [[['true'], { out: 'a' }]]);
    expect(checkTable('t', half).checks[0]?.example).toEqual({ user: { admin: false } });
  });
});

describe('rules that can never be chosen', () => {
  it('under `first`: a rule covered by one earlier rule, or by several together', () => {
    const node = table(
      'first',
      ['a.x', 'a.y'],
      [
        [['< 10', '-'], { out: '1' }],
        [['>= 10', '"p"'], { out: '2' }],
        [['>= 10', 'is not in ["p"]'], { out: '3' }],
        [['>= 50', '-'], { out: '4' }],
        [['< 5', '"q"'], { out: '5' }],
      ],
    );
    const { checks } = checkTable('t', node);
    expect(checks.map((c) => [c.check, c.rules])).toEqual([
      ['unreachable', [2, 3, 4]],
      ['unreachable', [1, 5]],
    ]);
    expect(checks[1].message).toBe(
      'table `t`: rule 5 can never be chosen: rule 1 before it matches every input it matches (`first` hit policy)',
    );
    expect(checks[0].message).toBe(
      'table `t`: rule 4 can never be chosen: rules 2 and 3 before it match every input it matches (`first` hit policy)',
    );
  });

  it('under `priority`: a rule outranked wherever it matches', () => {
    const node = table(
      'priority',
      ['a.x'],
      [
        [['>= 0'], { out: 'low' }],
        [['>= 10'], { out: 'high' }],
        [['< 0'], { out: 'low' }],
      ],
      [{ name: 'out', values: ['high', 'low'] }],
    );
    const { checks } = checkTable('t', node);
    expect(checks.map((c) => c.check)).toEqual([]);
    const shadowed = table(
      'priority',
      ['a.x'],
      [
        [['>= 20'], { out: 'low' }],
        [['>= 10'], { out: 'high' }],
        [['< 10'], { out: 'low' }],
      ],
      [{ name: 'out', values: ['high', 'low'] }],
    );
    expect(checkTable('t', shadowed).checks.map((c) => [c.check, c.rules])).toEqual([['unreachable', [2, 1]]]);
  });

  it('never claims a rule is shadowed by a rule with a cell it cannot reason about', () => {
    const node = table(
      'first',
      ['a.code', 'a.n'],
      [
        [['matches pattern "^[A-Z]+$"', '-'], { out: '1' }],
        [['-', '>= 0'], { out: '2' }],
        [['-', '< 0'], { out: '3' }],
      ],
    );
    expect(checkTable('t', node).checks).toEqual([]);
  });
});

describe('rules whose cells exclude each other', () => {
  it('reports `> 5` and `< 3` on one path as a rule that can never match', () => {
    const node = table(
      'collect',
      ['a.n', 'a.n'],
      [
        [['> 5', '< 3'], { out: 'never' }],
        [['-', '-'], { out: 'always' }],
      ],
    );
    const { checks } = checkTable('t', node);
    expect(checks).toEqual([
      {
        check: 'never_matches',
        severity: 'warning',
        message: 'table `t`: rule 1 can never match: its cells on `a.n` exclude each other',
        path: 'nodes.t.rules.0',
        rules: [1],
      },
    ]);
  });
});

describe('bounded work', () => {
  it('checks a 300-rule × 10-input table, and says when a bound stopped it', () => {
    const inputs = Array.from({ length: 10 }, (_, i) => `a.c${i}`);
    const rules: Array<[string[], Record<string, number>]> = Array.from({ length: 300 }, (_, r) => [
      inputs.map((_, c) => (c === r % 10 ? `>= ${r * 10}` : c === (r + 1) % 10 ? `< ${r * 10 + 5}` : '-')),
      { out: r },
    ]);
    const node = table('unique', inputs, rules);
    const full = checkTable('t', node);
    expect(full.complete).toBe(true);
    expect(full.checks.length).toBeGreaterThan(0);
    const cut = checkTable('t', node, 1000);
    expect(cut.complete).toBe(false);
  });
});

describe('the interval search (gaps and rules never chosen), against every input', () => {
  /** A small deterministic PRNG (mulberry32), so every run checks the same tables. */
  function prng(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const colours = ['"red"', '"green"', '"blue"'];
  /** Ranges (one-sided, two-sided on one path, all but a point), colour sets and don't-cares on few constants. */
  function randomTable(seed: number, hitPolicy: FlowTableNode['hitPolicy']): FlowTableNode {
    const rnd = prng(seed);
    const k = () => Math.floor(rnd() * 5) * 10;
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
    const numeric = () => (rnd() < 0.3 ? '-' : pick([`>= ${k()}`, `< ${k()}`, `!= ${k()}`, `is in [${k()}, ${k()}]`]));
    const rules: Array<[string[], Record<string, number>]> = Array.from({ length: 6 + Math.floor(rnd() * 5) }, (_, r) => [
      [numeric(), numeric(), rnd() < 0.4 ? '-' : `is in [${pick(colours)}, ${pick(colours)}]`, rnd() < 0.7 ? '-' : `< ${k()}`],
      { out: r },
    ]);
    // The last input shares the first's path: a range written in two columns.
    return table(hitPolicy, ['x.a', 'x.b', 'x.c', 'x.a'], rules);
  }

  /** Every input the checks tell apart (one value per piece of each path), with the rules matching it. */
  function everyInput(node: FlowTableNode): Array<{ data: Record<string, unknown>; matched: number[] }> {
    const space = tableSpace(node)!;
    const compiled = compileTable('probe', { ...node, hitPolicy: 'rule order' });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
    const out: Array<{ data: Record<string, unknown>; matched: number[] }> = [];
    const walk = (d: number, x: Record<string, unknown>): void => {
      if (d === space.dimensions.length) {
        const data = { x: { ...x } };
        const outcome = evaluateTable('probe', compiled.table, data, new StepBudget(1_000_000), { trace: false });
        if (outcome.error !== undefined) throw new Error(outcome.error);
        out.push({ data, matched: outcome.matched });
        return;
      }
      const dim = space.dimensions[d];
      for (const example of dim.examples) walk(d + 1, { ...x, [dim.steps[1]]: example });
    };
    walk(0, {});
    return out;
  }

  it('reports exactly the gaps and the rules never chosen that enumerating every input finds (`first`, 60 tables)', () => {
    let unreachable = 0;
    let byMany = 0;
    let gaps = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const node = randomTable(seed, 'first');
      const inputs = everyInput(node);
      const { checks, complete } = checkTable('t', node);
      expect(complete).toBe(true);
      // A rule is never chosen when it matches some input and an earlier rule matches each of them.
      const expected = node.rules
        .map((_, r) => r)
        .filter((r) => {
          const mine = inputs.filter((i) => i.matched.includes(r));
          return mine.length > 0 && mine.every((i) => i.matched[0] < r);
        })
        .map((r) => r + 1);
      const found = checks.filter((c) => c.check === 'unreachable');
      expect(found.map((c) => c.rules[c.rules.length - 1])).toEqual(expected);
      for (const c of found) {
        // Every input the rule matches is matched by one of the rules named before it.
        const r = c.rules[c.rules.length - 1] - 1;
        const by = c.rules.slice(0, -1).map((n) => n - 1);
        for (const i of inputs) if (i.matched.includes(r)) expect(i.matched.some((m) => by.includes(m))).toBe(true);
        if (by.length > 1) byMany++;
      }
      unreachable += found.length;
      const gap = checks.find((c) => c.check === 'gap');
      expect(gap !== undefined).toBe(inputs.some((i) => i.matched.length === 0));
      if (gap) {
        gaps++;
        expect(matching(node, gap.example!)).toEqual([]);
      }
    }
    // The tables reach every case: rules shadowed by one rule and by several, gaps and none.
    expect(unreachable).toBeGreaterThan(byMany);
    expect(byMany).toBeGreaterThan(0);
    expect(gaps).toBeGreaterThan(0);
    expect(gaps).toBeLessThan(60);
  });

  it('settles a rule whose earlier rules hold too few of its inputs without searching (their shares add up to less than it)', () => {
    // Rule 41 spans [0, 40) × [0, 40); each earlier rule holds a 1 × 1 cell of it: 40 of 1,600 cells.
    const rules: Array<[string[], Record<string, number>]> = Array.from({ length: 40 }, (_, i) => [
      [`is in [${i}]`, `is in [${i}]`],
      { out: i },
    ]);
    rules.push([['< 40', '< 40'], { out: 40 }]);
    const node = table('first', ['a.x', 'a.y'], rules, [{ name: 'out', default: 0 }]);
    // The rules looked at (each earlier rule for each later one), the root of the search and no more.
    const bound = (41 * 40) / 2 + 41;
    expect(checkTable('t', node, bound)).toEqual({ checks: [], complete: true });
    expect(checkTable('t', node, bound - 1).complete).toBe(false);
  });

  it('finds a rule covered only by several rules together, halving its region where they split it', () => {
    // Rule 5 is [0, 100) × [0, 100); rules 1–4 are its quadrants, none of them all of it.
    const node = table(
      'first',
      ['a.x', 'a.x', 'a.y', 'a.y'],
      [
        [['< 50', '>= 0', '< 50', '>= 0'], { out: 1 }],
        [['>= 50', '< 100', '< 50', '>= 0'], { out: 2 }],
        [['< 50', '>= 0', '>= 50', '< 100'], { out: 3 }],
        [['>= 50', '< 100', '>= 50', '< 100'], { out: 4 }],
        [['>= 0', '< 100', '>= 0', '< 100'], { out: 5 }],
      ],
      [{ name: 'out', default: 0 }],
    );
    const { checks, complete } = checkTable('t', node);
    expect(complete).toBe(true);
    expect(checks.map((c) => [c.check, c.rules])).toEqual([['unreachable', [1, 2, 3, 4, 5]]]);
    // Without rule 4, the corner [50, 100) × [50, 100) stays reachable.
    const open = { ...node, rules: node.rules.filter((_, r) => r !== 3) };
    expect(checkTable('t', open).checks).toEqual([]);
  });
});
