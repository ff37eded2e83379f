/** Validation of table nodes: every problem named with its rule, input and position, and a path into the definition. */

import type { FlowDefinition, FlowTableNode } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { parseDefinition, validateDefinition } from '../src/index.js';

const base: FlowTableNode = {
  type: 'table',
  hitPolicy: 'first',
  inputs: [
    { name: 'age', path: 'applicant.age' },
    { name: 'country', path: 'applicant.address.country' },
  ],
  outputs: [{ name: 'tier' }, { name: 'discount' }],
  rules: [
    { when: ['>= 18', 'is in ["NL", "BE"]'], then: { tier: 'gold', discount: 10 } },
    { when: ['-', '-'], then: { tier: 'basic', discount: 0 } },
  ],
};

const flow = (t: Partial<FlowTableNode>, extra: FlowDefinition['nodes'] = {}): FlowDefinition => ({
  start: 't',
  nodes: { t: { ...base, ...t }, ...extra },
});
const problems = (def: FlowDefinition) => validateDefinition(def);

describe('table node validation', () => {
  it('accepts the issue example, ending the flow or going on to `next`', () => {
    expect(problems(flow({}))).toEqual([]);
    expect(problems(flow({ next: 'done' }, { done: { type: 'return', value: true } }))).toEqual([]);
  });

  it('a cell that does not parse: rule, input, line and column, path to the cell', () => {
    const def = flow({ rules: [{ when: ['>= 18', 'is in "NL"'], then: { tier: 'gold' } }] });
    expect(problems(def)).toEqual([
      {
        code: 'invalid_cell',
        message: 'table `t`: rule 1, input `country`: line 1, column 7: `is in` needs a list or a path, not a string',
        path: 'nodes.t.rules.0.when.1',
      },
    ]);
  });

  it('every bad cell is listed, and an unquoted word gets the language help', () => {
    const def = flow({
      rules: [
        { when: ['>= eighteen', '-'], then: {} },
        { when: ['-', 'is NL'], then: {} },
      ],
    });
    expect(problems(def).map((p) => [p.path, p.message])).toEqual([
      [
        'nodes.t.rules.0.when.0',
        'table `t`: rule 1, input `age`: line 1, column 4: unexpected word `eighteen`: string values must be quoted, e.g. "eighteen"',
      ],
      [
        'nodes.t.rules.1.when.1',
        'table `t`: rule 2, input `country`: line 1, column 4: unexpected word `NL`: string values must be quoted, e.g. "NL"',
      ],
    ]);
  });

  it('an input path that does not parse', () => {
    const def = flow({ inputs: [base.inputs[0], { name: 'country', path: 'country' }] });
    expect(problems(def)).toEqual([
      {
        code: 'invalid_cell',
        message: 'table `t`: input `country`: path: line 1, column 1: unexpected `country`',
        path: 'nodes.t.inputs.1.path',
      },
    ]);
  });

  it('a rule naming an unknown output', () => {
    const def = flow({ rules: [{ when: ['-', '-'], then: { tier: 'gold', rebate: 5 } }] });
    expect(problems(def)).toEqual([
      {
        code: 'unknown_output',
        message: 'table `t`: rule 1 sets `rebate`, which is not an output of the table',
        path: 'nodes.t.rules.0.then.rebate',
      },
    ]);
  });

  it('a rule with the wrong number of cells', () => {
    expect(problems(flow({ rules: [{ when: ['-'], then: {} }] }))[0]).toMatchObject({
      code: 'invalid_table',
      path: 'nodes.t.rules.0.when',
    });
  });

  it('priority: needs a values list, and the list must cover every value used', () => {
    expect(problems(flow({ hitPolicy: 'priority' }))).toEqual([
      expect.objectContaining({ code: 'invalid_table', path: 'nodes.t.outputs' }),
    ]);
    const def = flow({ hitPolicy: 'priority', outputs: [{ name: 'tier', values: ['gold'] }, { name: 'discount' }] });
    expect(problems(def)).toEqual([
      {
        code: 'invalid_table',
        message: 'table `t`: rule 2 gives `tier` the value "basic", which its output\'s `values` do not list (the priority order)',
        path: 'nodes.t.rules.1.then.tier',
      },
    ]);
  });

  it('aggregation: collect only, one numeric output', () => {
    expect(problems(flow({ aggregation: 'sum' }))[0]).toMatchObject({ code: 'invalid_table', path: 'nodes.t.aggregation' });
    expect(problems(flow({ hitPolicy: 'collect', aggregation: 'sum' }))[0]).toMatchObject({
      code: 'invalid_table',
      path: 'nodes.t.outputs',
    });
    const one = flow({
      hitPolicy: 'collect',
      aggregation: 'sum',
      outputs: [{ name: 'tier' }],
      rules: [{ when: ['-', '-'], then: { tier: 'gold' } }],
    });
    expect(problems(one)[0]).toMatchObject({ code: 'invalid_table', path: 'nodes.t.rules.0.then.tier' });
  });

  it('routes: targets must exist, `routeOn` must name an output, and a `default` is needed unless the values are covered', () => {
    const done = { type: 'return', value: true } as const;
    expect(problems(flow({ routeOn: 'tier', routes: { gold: 'done', basic: 'nowhere' }, default: 'done' }, { done }))).toEqual([
      { code: 'unknown_node', message: 'node `t`: `routes.basic` names `nowhere`, which does not exist', path: 'nodes.t.routes.basic' },
    ]);
    expect(problems(flow({ routeOn: 'rebate', routes: { gold: 'done' }, default: 'done' }, { done }))).toEqual([
      {
        code: 'unknown_output',
        message: 'table `t`: `routeOn` names `rebate`, which is not an output of the table',
        path: 'nodes.t.routeOn',
      },
    ]);
    expect(problems(flow({ routes: { gold: 'done' }, default: 'done' }, { done }))[0]).toMatchObject({ path: 'nodes.t.routeOn' });
    expect(problems(flow({ routeOn: 'tier', routes: { gold: 'done' } }, { done }))).toEqual([
      expect.objectContaining({ code: 'missing_branch', path: 'nodes.t.default' }),
    ]);
    const covered = flow(
      {
        outputs: [{ name: 'tier', values: ['gold', 'basic'] }, { name: 'discount' }],
        routeOn: 'tier',
        routes: { gold: 'done', basic: 'done' },
      },
      { done },
    );
    expect(problems(covered)).toEqual([]);
    expect(problems(flow({ hitPolicy: 'collect', routeOn: 'tier', routes: { gold: 'done' }, default: 'done' }, { done }))[0]).toMatchObject(
      {
        code: 'invalid_table',
        path: 'nodes.t.routes',
      },
    );
    expect(problems(flow({ next: 'done', routeOn: 'tier', routes: { gold: 'done' }, default: 'done' }, { done }))[0]).toMatchObject({
      path: 'nodes.t.next',
    });
  });

  it('routes take part in the DAG checks: a route back to the table is a cycle', () => {
    const def = flow({ routeOn: 'tier', routes: { gold: 't' }, default: 'x' }, { x: { type: 'custom', outcome: 'x' } });
    expect(problems(def).map((p) => p.code)).toEqual(['cycle']);
  });

  it('the schema rejects unknown hit policies and keys', () => {
    const parsed = parseDefinition({ start: 't', nodes: { t: { ...base, hitPolicy: 'output order' } } });
    expect(parsed.ok).toBe(false);
    const extra = parseDefinition({ start: 't', nodes: { t: { ...base, colour: 'red' } } });
    expect(extra.ok).toBe(false);
  });
});

describe('table names', () => {
  it('an output named `__proto__` is refused by the schema (it could not be a key of the output object)', () => {
    const parsed = parseDefinition({ start: 't', nodes: { t: { ...base, outputs: [{ name: '__proto__' }], rules: [] } } });
    expect(parsed.ok).toBe(false);
  });
});
