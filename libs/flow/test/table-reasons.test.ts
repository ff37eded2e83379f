/**
 * A table node's reasons (docs/LANGUAGE.md §10.4): the rows that matched with each cell's text
 * and the value it tested, or `no rule matched` with each row's first failing cell (at most 20
 * rows, `count` the number of rows). Without reasons the node is exactly as before.
 */

import type { FlowDefinition, FlowTableNode, FlowTableNodeRun } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { runFlow, validateDefinition, type PolicyResolver } from '../src/index.js';

const noPolicies: PolicyResolver = () => Promise.reject(new Error('no policy nodes here'));

const TIERS: Omit<FlowTableNode, 'type'> = {
  hitPolicy: 'first',
  inputs: [
    { name: 'age', path: 'applicant.age' },
    { name: 'country', path: 'applicant.country' },
  ],
  outputs: [{ name: 'tier' }],
  rules: [
    { when: ['>= 65', '-'], then: { tier: 'senior' } },
    { when: ['>= 18', 'is in ["NL", "BE"]'], then: { tier: 'adult' } },
    { when: ['< 18', '-'], then: { tier: 'minor' } },
  ],
};

async function tableRun(table: Omit<FlowTableNode, 'type'>, data: Record<string, unknown>, reasons: boolean, trace = false) {
  const def: FlowDefinition = { start: 't', nodes: { t: { type: 'table', ...table } } };
  expect(validateDefinition(def)).toEqual([]);
  const out = await runFlow(def, data, noPolicies, 1_000_000, { trace, reasons });
  return out.nodes[0] as FlowTableNodeRun;
}

describe('table reasons', () => {
  it('a row that matched: its number, each cell as written with the value it tested', async () => {
    const node = await tableRun(TIERS, { applicant: { age: 40, country: 'NL' } }, true);
    expect(node.reasons).toEqual({
      result: true,
      sentence: 't is {"tier":"adult"} because rule 2 matched (age: >= 18 (40), country: is in ["NL", "BE"] ("NL"))',
      because: [
        {
          kind: 'table',
          rule: 't',
          text: 'rule 2',
          holds: true,
          row: 2,
          line: 2,
          column: 1,
          because: [
            { kind: 'condition', rule: 't', text: '>= 18', holds: true, path: 'applicant.age', value: 40, line: 2, column: 1 },
            {
              kind: 'condition',
              rule: 't',
              text: 'is in ["NL", "BE"]',
              holds: true,
              path: 'applicant.country',
              value: 'NL',
              line: 2,
              column: 2,
            },
          ],
        },
      ],
    });
    expect(node.cells).toEqual([]);
  });

  it('no rule matched: each row with its first failing cell', async () => {
    const node = await tableRun(TIERS, { applicant: { age: 40, country: 'US' } }, true);
    expect(node.reasons!.result).toBe(false);
    expect(node.reasons!.because).toHaveLength(1);
    const none = node.reasons!.because[0];
    expect(none).toMatchObject({ kind: 'table', text: 'no rule matched', holds: false, count: 3 });
    expect(none.because!.map((r) => [r.row, r.because!.map((c) => [c.text, c.value])])).toEqual([
      [1, [['>= 65', 40]]],
      [2, [['is in ["NL", "BE"]', 'US']]],
      [3, [['< 18', 40]]],
    ]);
    expect(node.reasons!.sentence).toBe(
      't is {"tier":null} because no rule matched (rule 1: age: >= 65 (40) does not hold; rule 2: country: is in ["NL", "BE"] ("US") does not hold; rule 3: age: < 18 (40) does not hold)',
    );
  });

  it('lists at most 20 rows when none matched, and counts them all', async () => {
    const rules = Array.from({ length: 30 }, (_, i) => ({ when: [`${i + 100}`, '-'], then: { tier: `t${i}` } }));
    const node = await tableRun({ ...TIERS, rules }, { applicant: { age: 1, country: 'NL' } }, true);
    const none = node.reasons!.because[0];
    expect(none.count).toBe(30);
    expect(none.because).toHaveLength(20);
    expect(node.reasons!.sentence).toMatch(/; and 10 more rows\)$/);
  });

  it('without reasons the node is exactly as before; with them only `reasons` is added, trace or not', async () => {
    for (const trace of [false, true]) {
      const data = { applicant: { age: 40, country: 'NL' } };
      const plain = await tableRun(TIERS, data, false, trace);
      expect(plain).not.toHaveProperty('reasons');
      const { reasons, ...rest } = await tableRun(TIERS, data, true, trace);
      expect(rest).toEqual(plain);
      expect(reasons?.result).toBe(true);
    }
  });

  it('missing data: a missing entry at the cell that met it, with the path and the error', async () => {
    const node = await tableRun({ ...TIERS, rules: [{ when: ['>= 18', '"NL"'], then: { tier: 'a' } }] }, {}, true);
    expect(node.errorCode).toBe('missing_selector');
    expect(node.reasons).toEqual({
      result: false,
      sentence: 't stopped: Missing selector: applicant',
      because: [
        {
          kind: 'missing',
          rule: 't',
          text: '>= 18',
          holds: false,
          path: 'applicant',
          error: 'Missing selector: applicant',
          line: 1,
          column: 1,
        },
      ],
    });
  });
});
