/** Names of Object.prototype members are never nodes (REVIEW.md: a key lookup must not see prototypes). */

import type { FlowDefinition } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { runFlow, validateDefinition } from '../src/index.js';

const B1 = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)];

describe.each(PROTOTYPE_NAMES)('prototype name `%s`', (name) => {
  it('is a missing start node (was accepted: `{"start":"hasOwnProperty","nodes":{}}`)', () => {
    expect(validateDefinition({ start: name, nodes: {} }).map((p) => p.code)).toEqual(['missing_start']);
  });

  it('is an unknown node when a branch names it', () => {
    const def: FlowDefinition = {
      start: 'a',
      nodes: { a: { type: 'policy', baseId: B1, onTrue: name, onFalse: 'end' }, end: { type: 'return', value: false } },
    };
    expect(validateDefinition(def).map((p) => [p.code, p.path])).toEqual([['unknown_node', 'nodes.a.onTrue']]);
  });

  it('ends a run as invalid_flow, never reaching a prototype member', async () => {
    const run = await runFlow({ start: name, nodes: {} }, {}, () => Promise.reject(new Error('no policy node here')));
    expect(run).toMatchObject({ result: false, errorCode: 'invalid_flow' });
  });

  it('works as an ordinary node id when it is one', () => {
    const def: FlowDefinition = { start: name, nodes: { [name]: { type: 'return', value: true } } };
    expect(validateDefinition(def)).toEqual([]);
  });
});
