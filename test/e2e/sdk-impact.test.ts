/**
 * The SDK's impact analysis against the whole stack: `policies.impact` replays the
 * recorded decisions of a published policy through a draft that moves its threshold, typed as the
 * contracts' `ImpactReport`, with its options (`limit`, `from`/`to`) sent as the body; refusals are
 * thrown as `ArbiterError`. `flows.impact` replays a flow's recorded decisions through a draft
 * whose policy node runs a moved threshold, and answers the same `ImpactReport` with `flowId` and
 * the sides' paths.
 */

import { Arbiter, ArbiterError, type ImpactOptions } from '@arbiter/sdk';
import type { FlowDefinition, ImpactReport } from '@arbiter/contracts';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from './harness.js';

let stack: Stack;
let admin: Arbiter;

const rule = (threshold: number) => `An **applicant** is approved if the __score__ of the **applicant** is at least ${threshold}.`;

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'governance', 'gateway'],
    env: { DECISIONS_FLUSH_MS: '50', DECISIONS_PER_SECOND: '1000' },
  });
  admin = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
}, 120_000);
afterAll(async () => stack?.stop());

async function failure(pending: Promise<unknown>): Promise<ArbiterError> {
  try {
    await pending;
  } catch (err) {
    if (err instanceof ArbiterError) return err;
    throw err;
  }
  throw new Error('expected an ArbiterError');
}

/** How many decisions of `baseId` the audit service holds (`GET /decisions`; the SDK has no method for it yet). */
async function recorded(baseId: string): Promise<number> {
  const res = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=200`, { key: stack.adminKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.items as unknown[]).length;
}

describe('policies.impact', () => {
  it('replays the recorded decisions through a draft and answers the typed report; limit and from/to are sent', async () => {
    const created = await admin.policies.create({ name: 'impact via sdk', rule: rule(600) });
    const published = await admin.policies.update(created.policyId, { status: 'published' });
    expect(published.outcome).toBe('published');
    // Scores 590..619 (30 decisions): 10 below the old threshold, 20 above; 5 of them in [600, 605).
    const items = Array.from({ length: 30 }, (_, i) => ({ applicant: { score: 590 + i } }));
    for (const item of items.slice(0, 5)) await admin.policies.run(created.baseId, item);
    await admin.policies.runBatch(created.baseId, items.slice(5));
    await eventually(
      async () => {
        expect(await recorded(created.baseId)).toBe(30);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const { record: draft } = await admin.policies.draft(created.policyId);
    await admin.policies.update(draft.policyId, { status: 'draft', rule: rule(605) });

    const report: ImpactReport = await admin.policies.impact(draft.policyId);
    expect(report).toMatchObject({
      policyId: draft.policyId,
      baseId: created.baseId,
      replayed: 30,
      unchanged: 25,
      changed: 5,
      errors: 0,
      unreplayable: 0,
      transitions: { 'true→false': 5 },
    });
    expect(report.examples).toHaveLength(5);
    for (const ex of report.examples ?? []) {
      const score = (ex.input as { applicant: { score: number } }).applicant.score;
      expect(score).toBeGreaterThanOrEqual(600);
      expect(score).toBeLessThan(605);
      expect(ex).toMatchObject({ before: { result: true }, after: { result: false } });
    }
    // the review summary of the draft carries the same report
    expect((await admin.policies.review(draft.policyId)).impact?.impactId).toBe(report.impactId);

    const limited: ImpactOptions = { limit: 4 };
    expect((await admin.policies.impact(draft.policyId, limited)).replayed).toBe(4);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const none = await admin.policies.impact(draft.policyId, { from: future });
    expect(none).toMatchObject({ replayed: 0, changed: 0, examples: [] });
    expect(none.transitions).toEqual({});
    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect((await admin.policies.impact(draft.policyId, { from: past, to: future })).changed).toBe(5);
  });

  it('throws the refusals as ArbiterError: a viewer 403, an unknown record 404, a limit over 10,000 400', async () => {
    const created = await admin.policies.create({ name: 'impact refusals', rule: rule(1) });
    const viewer = new Arbiter({ baseUrl: stack.baseUrl, apiKey: await memberKey(stack, 'vera', 'viewer', ['view']) });
    expect(await failure(viewer.policies.impact(created.policyId))).toMatchObject({ status: 403, code: 'forbidden' });
    expect(await failure(admin.policies.impact('0190a0b0-0000-7000-8000-00000000dead'))).toMatchObject({ status: 404, code: 'not_found' });
    const tooMany = await failure(admin.policies.impact(created.policyId, { limit: 10_001 }));
    expect(tooMany).toMatchObject({ status: 400, code: 'validation_failed' });
  });
});

describe('flows.impact', () => {
  /** Approve on a policy node (`policyId` an exact record), else the custom outcome `manual review`. */
  const approval = (policyId: string): FlowDefinition => ({
    start: 'score',
    nodes: {
      score: { type: 'policy', policyId, onTrue: 'ok', onFalse: 'review' },
      ok: { type: 'return', value: true },
      review: { type: 'custom', outcome: 'manual review' },
    },
  });

  it('replays the flow’s recorded decisions through a draft and answers the contracts’ report with flowId and paths', async () => {
    const policy = await admin.policies.create({ name: 'flow impact policy', rule: rule(600) });
    await admin.policies.update(policy.policyId, { status: 'published' });
    const { record: policyDraft } = await admin.policies.draft(policy.policyId);
    await admin.policies.update(policyDraft.policyId, { status: 'draft', rule: rule(605) });

    const flow = await admin.flows.create({ name: 'flow impact via sdk', definition: approval(policy.policyId) });
    expect((await admin.flows.update(flow.flowId, { status: 'published' })).outcome).toBe('published');
    // Scores 590..619 (30 decisions); 5 of them in [600, 605).
    const items = Array.from({ length: 30 }, (_, i) => ({ applicant: { score: 590 + i } }));
    for (const item of items.slice(0, 5)) await admin.flows.run(flow.baseId, item);
    await admin.flows.runBatch(flow.baseId, items.slice(5));
    await eventually(
      async () => {
        expect(await recorded(flow.baseId)).toBe(30);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const { record: draft } = await admin.flows.draft(flow.flowId);
    await admin.flows.update(draft.flowId, { status: 'draft', definition: approval(policyDraft.policyId) });

    const report: ImpactReport = await admin.flows.impact(draft.flowId);
    expect(report).toMatchObject({
      flowId: draft.flowId,
      baseId: flow.baseId,
      replayed: 30,
      unchanged: 25,
      changed: 5,
      errors: 0,
      unreplayable: 0,
      transitions: { 'true→manual review': 5 },
      outcomes: {},
    });
    expect(report.policyId).toBeUndefined();
    expect(report.examples).toHaveLength(5);
    for (const ex of report.examples ?? []) {
      const score = (ex.input as { applicant: { score: number } }).applicant.score;
      expect(score).toBeGreaterThanOrEqual(600);
      expect(score).toBeLessThan(605);
      expect(ex).toMatchObject({
        before: { result: true, errorCode: null, path: ['score', 'ok'] },
        after: { result: 'manual review', errorCode: null, path: ['score', 'review'] },
      });
    }
    expect((await admin.flows.review(draft.flowId)).impact?.impactId).toBe(report.impactId);
    expect((await admin.flows.impact(draft.flowId, { limit: 4 })).replayed).toBe(4);
    const viewer = new Arbiter({ baseUrl: stack.baseUrl, apiKey: await memberKey(stack, 'vic', 'viewer', ['view']) });
    expect(await failure(viewer.flows.impact(draft.flowId))).toMatchObject({ status: 403, code: 'forbidden' });
  });
});
