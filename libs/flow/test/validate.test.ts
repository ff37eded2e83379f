import type { FlowDefinition } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { parseDefinition, validateDefinition } from '../src/index.js';

const B1 = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const B2 = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';

/** A diamond: n1 → (n2 | n3) → both reach the shared n4, which returns. */
const diamond: FlowDefinition = {
  start: 'n1',
  nodes: {
    n1: { type: 'policy', baseId: B1, onTrue: 'n2', onFalse: 'n3' },
    n2: { type: 'policy', baseId: B2, version: 2, onTrue: 'n4', onFalse: 'deny' },
    n3: { type: 'policy', policyId: B2, onTrue: 'n4', onFalse: 'review' },
    n4: { type: 'return', value: true },
    deny: { type: 'return', value: false },
    review: { type: 'custom', outcome: 'manual review' },
  },
};

const codes = (def: FlowDefinition) => validateDefinition(def).map((p) => [p.code, p.path]);

describe('validateDefinition', () => {
  it('accepts a DAG whose nodes share a successor', () => {
    expect(validateDefinition(diamond)).toEqual([]);
  });

  it('accepts a single terminal start', () => {
    expect(validateDefinition({ start: 'only', nodes: { only: { type: 'custom', outcome: 'x' } } })).toEqual([]);
  });

  it('reports a missing start, and no reachability noise with it', () => {
    const problems = validateDefinition({ ...diamond, start: 'nope' });
    expect(problems).toEqual([{ code: 'missing_start', message: 'start node `nope` does not exist', path: 'start' }]);
  });

  it('reports a branch naming an unknown node', () => {
    const def: FlowDefinition = {
      ...diamond,
      nodes: { ...diamond.nodes, n2: { type: 'policy', baseId: B2, onTrue: 'n4', onFalse: 'ghost' } },
    };
    expect(validateDefinition(def)).toEqual([
      { code: 'unknown_node', message: 'node `n2`: `onFalse` names `ghost`, which does not exist', path: 'nodes.n2.onFalse' },
      { code: 'unreachable_node', message: 'node `deny` cannot be reached from the start `n1`', path: 'nodes.deny' },
    ]);
  });

  it('reports each missing branch (a path that would not end in return/custom)', () => {
    const def: FlowDefinition = { start: 'a', nodes: { a: { type: 'policy', baseId: B1 } } };
    expect(codes(def)).toEqual([
      ['missing_branch', 'nodes.a.onTrue'],
      ['missing_branch', 'nodes.a.onFalse'],
    ]);
  });

  it('reports a cycle with its loop', () => {
    const def: FlowDefinition = {
      start: 'a',
      nodes: {
        a: { type: 'policy', baseId: B1, onTrue: 'b', onFalse: 'end' },
        b: { type: 'policy', baseId: B1, onTrue: 'a', onFalse: 'end' },
        end: { type: 'return', value: false },
      },
    };
    expect(validateDefinition(def)).toEqual([{ code: 'cycle', message: 'cycle: `a` → `b` → `a`', path: 'nodes.a' }]);
  });

  it('reports a self-loop and a cycle among unreachable nodes', () => {
    const def: FlowDefinition = {
      start: 'a',
      nodes: {
        a: { type: 'policy', baseId: B1, onTrue: 'a', onFalse: 'end' },
        end: { type: 'return', value: false },
        x: { type: 'policy', baseId: B1, onTrue: 'y', onFalse: 'end' },
        y: { type: 'policy', baseId: B1, onTrue: 'x', onFalse: 'end' },
      },
    };
    expect(codes(def)).toEqual([
      ['cycle', 'nodes.a'],
      ['cycle', 'nodes.x'],
      ['unreachable_node', 'nodes.x'],
      ['unreachable_node', 'nodes.y'],
    ]);
  });

  it('reports unreachable nodes', () => {
    const def: FlowDefinition = { ...diamond, nodes: { ...diamond.nodes, orphan: { type: 'return', value: true } } };
    expect(codes(def)).toEqual([['unreachable_node', 'nodes.orphan']]);
  });

  it('lists every problem at once', () => {
    const def: FlowDefinition = {
      start: 'a',
      nodes: {
        a: { type: 'policy', baseId: B1, onTrue: 'missing' },
        lost: { type: 'custom', outcome: 'lost' },
      },
    };
    expect(codes(def)).toEqual([
      ['unknown_node', 'nodes.a.onTrue'],
      ['missing_branch', 'nodes.a.onFalse'],
      ['unreachable_node', 'nodes.lost'],
    ]);
  });
});

describe('parseDefinition', () => {
  it('parses a valid definition', () => {
    expect(parseDefinition(diamond)).toEqual({ ok: true, definition: diamond });
  });

  it('reports shape problems with their paths', () => {
    const parsed = parseDefinition({
      start: 'a',
      nodes: { a: { type: 'policy', baseId: B1, policyId: B2, onTrue: 'b', onFalse: 'b' }, b: { type: 'jump' } },
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((p) => [p.code, p.path])).toEqual([
      ['invalid_definition', 'nodes.a'],
      ['invalid_definition', 'nodes.b.type'],
    ]);
    expect(parsed.problems[0].message).toBe('`nodes.a`: must name exactly one of `baseId` and `policyId`');
  });

  it('rejects unknown keys and a version without a base', () => {
    const parsed = parseDefinition({
      start: 'a',
      extra: 1,
      nodes: { a: { type: 'policy', policyId: B2, version: 1, onTrue: 'a', onFalse: 'a' } },
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((p) => p.path)).toEqual(expect.arrayContaining(['nodes.a.version']));
    expect(parsed.problems.some((p) => p.message.includes('extra'))).toBe(true);
  });
});
