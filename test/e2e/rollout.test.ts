/**
 * End-to-end: staged rollouts (docs/api.md#staged-rollouts, docs/design/canary.md). A publish with
 * `rollout` sends `percent` of the runs by base id to the new version by a stable hash of the value
 * at `by` (the same customer, the same version, in the service and in an SDK runtime), the rest to
 * the previous version; widening, promoting and rolling back are publisher/admin acts, audited as
 * `rollout changed`; a guarded rollout whose new version errors rolls back by itself.
 */

import { Arbiter, type LocalRuntime } from '@arbiter/sdk';
import { eventually } from '@arbiter/test-kit';
import type { FlowDefinition } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from './harness.js';

let stack: Stack;
const key: Record<'eddie' | 'pat' | 'vera', string> = { eddie: '', pat: '', vera: '' };
const open: LocalRuntime[] = [];

beforeAll(async () => {
  stack = await startStack({
    services: ['registry', 'execution', 'governance', 'audit', 'gateway'],
    env: { RUNNABLE_POLL_MS: '500', EVENTS_FLUSH_MS: '200' },
  });
  key.eddie = await memberKey(stack, 'eddie', 'editor', ['view', 'edit']);
  key.pat = await memberKey(stack, 'pat', 'publisher', ['view', 'edit', 'publish']);
  key.vera = await memberKey(stack, 'vera', 'viewer', ['view']);
});
afterAll(async () => {
  await Promise.all(open.map((r) => r.close()));
  await stack?.stop();
});

const rule = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
/** A rule whose every run on applicants without a height answers an error code. */
const failing = 'An **applicant** is adult if the __height__ of the **applicant** is at least 1.';
const applicant = (id: string | number, age = 20) => ({ applicant: { id, age } });

/** A policy base published as version 1 with `rule(18)`. */
async function publishedBase(name: string, first = rule(18)): Promise<{ baseId: string; v1: string }> {
  const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name, rule: first } });
  expect(created.status).toBe(201);
  const published = await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: stack.adminKey, body: { status: 'published' } });
  expect(published.status).toBe(201);
  return { baseId: created.body.baseId as string, v1: created.body.policyId as string };
}

/** Publishes a new version of the base with `next` as its rule, started as `rollout`. */
async function publishRollout(baseId: string, next: string, rollout: unknown, k = stack.adminKey) {
  const draft = await call(stack, 'GET', `/policy/${baseId}/draft`, { key: k });
  expect([200, 201]).toContain(draft.status);
  return call(stack, 'PUT', `/policy/${draft.body.policyId}`, { key: k, body: { status: 'published', rule: next, rollout } });
}

/** Runs the base on many data objects (batches of 1,000) and answers each answer's version. */
async function versionsOf(kind: 'policy' | 'flow', baseId: string, items: unknown[]): Promise<number[]> {
  const versions: number[] = [];
  for (let at = 0; at < items.length; at += 1000) {
    const res = await call(stack, 'POST', `/run/${kind}/${baseId}/batch?trace=false`, {
      key: stack.adminKey,
      body: { items: items.slice(at, at + 1000) },
    });
    expect(res.status).toBe(200);
    for (const r of res.body.results as Array<{ version: number }>) versions.push(r.version);
  }
  return versions;
}

const rolloutOf = async (kind: 'policy' | 'flow', baseId: string, k = stack.adminKey) =>
  call(stack, 'GET', `/${kind}/${baseId}/rollout`, { key: k });

async function auditOf(baseId: string): Promise<Array<{ kind: string; actor: { userId: string }; details: Record<string, unknown> }>> {
  const res = await call(stack, 'GET', `/audit?limit=200&kind=${encodeURIComponent('rollout changed')}`, { key: stack.adminKey });
  expect(res.status).toBe(200);
  return (
    res.body.items as Array<{ resource: { baseId: string }; kind: string; actor: { userId: string }; details: Record<string, unknown> }>
  )
    .filter((e) => e.resource.baseId === baseId)
    .reverse();
}

describe('a staged rollout by a data path', () => {
  let baseId: string;
  let v1: string;

  beforeAll(async () => {
    ({ baseId, v1 } = await publishedBase('Split'));
    const started = await publishRollout(baseId, rule(21), { percent: 10, by: 'applicant.id' });
    expect(started.status).toBe(201);
    expect(started.body.version).toBe(2);
  });

  it('sends 10 % ± 1 % of 10,000 distinct customers to the new version, the same customer always to the same one', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => applicant(`customer-${i}`));
    const versions = await versionsOf('policy', baseId, items);
    expect(new Set(versions)).toEqual(new Set([1, 2]));
    const share = versions.filter((v) => v === 2).length / versions.length;
    expect(share).toBeGreaterThanOrEqual(0.09);
    expect(share).toBeLessThanOrEqual(0.11);
    // the same customers again (another order, another age): the same versions
    const again = await versionsOf(
      'policy',
      baseId,
      items
        .slice(0, 2000)
        .reverse()
        .map((d) => applicant(d.applicant.id, 30)),
    );
    expect(again.reverse()).toEqual(versions.slice(0, 2000));

    // an SDK runtime chooses exactly as the service did
    const runtime = await new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey }).local({ bases: [baseId], heartbeatMs: 500 });
    open.push(runtime);
    for (let i = 0; i < 2000; i++) expect(runtime.run(baseId, items[i]!, { trace: false }).version, `customer-${i}`).toBe(versions[i]);

    // widened to 50 %: every replica follows at once, the runtime within its sync
    const widened = await call(stack, 'POST', `/policy/${baseId}/rollout`, { key: key.pat, body: { percent: 50 } });
    expect(widened.status).toBe(200);
    expect(widened.body.rollout).toMatchObject({ percent: 50, by: 'applicant.id', version: 2, previousVersion: 1 });
    const wide = await versionsOf('policy', baseId, items.slice(0, 2000));
    const wideShare = wide.filter((v) => v === 2).length / wide.length;
    expect(wideShare).toBeGreaterThan(0.45);
    expect(wideShare).toBeLessThan(0.55);
    // a customer already on the new version stays there when the share grows
    for (let i = 0; i < 2000; i++) if (versions[i] === 2) expect(wide[i]).toBe(2);
    await eventually(() => {
      for (let i = 0; i < 2000; i++) expect(runtime.run(baseId, items[i]!, { trace: false }).version).toBe(wide[i]);
    }, 5000);
    expect((await call(stack, 'POST', `/policy/${baseId}/rollout`, { key: key.pat, body: { percent: 10 } })).status).toBe(200);
  });

  it('draws per run without a value at the path, and keeps exact-version runs as they were', async () => {
    const versions = await versionsOf(
      'policy',
      baseId,
      Array.from({ length: 2000 }, () => ({ applicant: { age: 20 } })),
    );
    const share = versions.filter((v) => v === 2).length / versions.length;
    expect(share).toBeGreaterThan(0.05);
    expect(share).toBeLessThan(0.15);
    const exact = await call(stack, 'POST', `/run/policy_version/${v1}`, { key: stack.adminKey, body: applicant('customer-1') });
    expect(exact.body).toMatchObject({ version: 1, policyId: v1 });
  });

  it('shows its state to members, refuses bad shares, other roles and a second publish, and changes nothing when refused', async () => {
    const state = await rolloutOf('policy', baseId, key.vera);
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({
      baseId,
      kind: 'policy',
      rollout: { percent: 10, by: 'applicant.id', version: 2, previousVersion: 1 },
    });
    for (const who of [key.vera, key.eddie]) {
      const refused = await call(stack, 'POST', `/policy/${baseId}/rollout`, { key: who, body: { percent: 90 } });
      expect(refused.status).toBe(403);
      expect((await call(stack, 'POST', `/policy/${baseId}/rollout/promote`, { key: who })).status).toBe(403);
      expect((await call(stack, 'POST', `/policy/${baseId}/rollout/rollback`, { key: who })).status).toBe(403);
    }
    expect((await call(stack, 'POST', `/policy/${baseId}/rollout`, { body: { percent: 90 } })).status).toBe(401);
    for (const body of [{ percent: 150 }, { percent: -1 }, { percent: 'ten' }, { percent: 10.001 }, {}, { percent: 20, by: 'x' }]) {
      const refused = await call(stack, 'POST', `/policy/${baseId}/rollout`, { key: key.pat, body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
    const unknown = '019a0000-0000-7000-8000-000000000000';
    expect((await rolloutOf('policy', unknown)).status).toBe(404);
    expect((await call(stack, 'POST', `/policy/${unknown}/rollout`, { key: key.pat, body: { percent: 5 } })).status).toBe(404);
    expect((await call(stack, 'POST', `/policy/not-a-uuid/rollout/promote`, { key: key.pat })).status).toBe(404);
    // a publish while the rollout runs is refused, the draft kept
    const again = await publishRollout(baseId, rule(30), { percent: 5 });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    expect((await rolloutOf('policy', baseId)).body.rollout).toMatchObject({ percent: 10, version: 2 });
  });

  it('rolls back: the previous version serves all, the new one stays in history; then nothing to promote', async () => {
    const back = await call(stack, 'POST', `/policy/${baseId}/rollout/rollback`, { key: key.pat });
    expect(back.status).toBe(200);
    expect(back.body).toEqual({ baseId, kind: 'policy', rollout: null });
    expect(
      new Set(
        await versionsOf(
          'policy',
          baseId,
          Array.from({ length: 500 }, (_, i) => applicant(`customer-${i}`)),
        ),
      ),
    ).toEqual(new Set([1]));
    expect((await call(stack, 'GET', `/policy/${baseId}`, { key: stack.adminKey })).body.version).toBe(1);
    const history = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: stack.adminKey });
    expect(history.body.items.map((r: { version: number | null }) => r.version)).toContain(2);
    for (const verb of ['promote', 'rollback']) {
      const none = await call(stack, 'POST', `/policy/${baseId}/rollout/${verb}`, { key: key.pat });
      expect(none.status).toBe(409);
      expect(none.body.code).toBe('conflict');
    }
    expect((await call(stack, 'POST', `/policy/${baseId}/rollout`, { key: key.pat, body: { percent: 20 } })).status).toBe(409);
    await eventually(async () =>
      expect((await auditOf(baseId)).map((e) => [e.details.action, e.actor.userId])).toEqual([
        ['started', 'admin'],
        ['percent', 'pat'],
        ['percent', 'pat'],
        ['rolled_back', 'pat'],
      ]),
    );
  });

  it('promotes: a new rollout at 0 % then promoted serves the new version to all', async () => {
    const started = await publishRollout(baseId, rule(25), { percent: 0 });
    expect(started.status).toBe(201);
    expect(started.body.version).toBe(3);
    expect(
      new Set(
        await versionsOf(
          'policy',
          baseId,
          Array.from({ length: 300 }, (_, i) => applicant(i)),
        ),
      ),
    ).toEqual(new Set([1]));
    const promoted = await call(stack, 'POST', `/policy/${baseId}/rollout/promote`, { key: stack.adminKey });
    expect(promoted.status).toBe(200);
    expect(promoted.body.rollout).toBeNull();
    expect(
      new Set(
        await versionsOf(
          'policy',
          baseId,
          Array.from({ length: 300 }, (_, i) => applicant(i)),
        ),
      ),
    ).toEqual(new Set([3]));
  });
});

describe('decision records', () => {
  it('keep the version each run of a rollout answered with', async () => {
    const { baseId } = await publishedBase('Recorded');
    expect((await publishRollout(baseId, rule(21), { percent: 50, by: 'applicant.id' })).status).toBe(201);
    const answered = new Map<string, number>();
    for (let i = 0; i < 20; i++) {
      const res = await call(stack, 'POST', `/run/policy/${baseId}`, { key: stack.adminKey, body: applicant(`r-${i}`) });
      expect(res.status).toBe(200);
      answered.set(`r-${i}`, res.body.version as number);
    }
    expect(new Set(answered.values())).toEqual(new Set([1, 2]));
    await eventually(async () => {
      const res = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=50`, { key: stack.adminKey });
      expect(res.status).toBe(200);
      const items = res.body.items as Array<{ version: number; input: { applicant: { id: string } } }>;
      expect(items).toHaveLength(20);
      for (const d of items) expect(d.version, d.input.applicant.id).toBe(answered.get(d.input.applicant.id));
    }, 10_000);
  });
});

describe('refusals at the publish', () => {
  it('a first publish has nothing to roll out from; a rollout is refused on a draft save and with a bad shape', async () => {
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'First', rule: rule(18) } });
    const first = await call(stack, 'PUT', `/policy/${created.body.policyId}`, {
      key: stack.adminKey,
      body: { status: 'published', rollout: { percent: 10 } },
    });
    expect(first.status).toBe(409);
    expect((await call(stack, 'GET', `/policy/${created.body.baseId}`, { key: stack.adminKey })).body.status).toBe('draft');
    const onDraft = await call(stack, 'PUT', `/policy/${created.body.policyId}`, {
      key: stack.adminKey,
      body: { status: 'draft', rollout: { percent: 10 } },
    });
    expect(onDraft.status).toBe(400);
    for (const rollout of [
      { percent: 101 },
      { percent: 10, by: 'a..b' },
      { percent: 10, minRuns: 50 },
      { percent: 10, maxErrorRate: 2 },
      { percent: 10, extra: 1 },
    ]) {
      const bad = await call(stack, 'PUT', `/policy/${created.body.policyId}`, {
        key: stack.adminKey,
        body: { status: 'published', rollout },
      });
      expect(bad.status, JSON.stringify(rollout)).toBe(400);
    }
  });

  it('a deleted base has no rollout to show or change', async () => {
    const { baseId } = await publishedBase('Deleted');
    expect((await publishRollout(baseId, rule(19), { percent: 30 })).status).toBe(201);
    expect((await call(stack, 'DELETE', `/policy/${baseId}`, { key: stack.adminKey })).status).toBe(204);
    expect((await rolloutOf('policy', baseId)).status).toBe(404);
    expect((await call(stack, 'POST', `/policy/${baseId}/rollout`, { key: key.pat, body: { percent: 40 } })).status).toBe(404);
    expect((await call(stack, 'POST', `/policy/${baseId}/rollout/rollback`, { key: key.pat })).status).toBe(404);
  });
});

describe('the error guard', () => {
  it('rolls a new version that errors back by itself, with a `guard` event', async () => {
    const { baseId } = await publishedBase('Guarded');
    const started = await publishRollout(baseId, failing, { percent: 50, maxErrorRate: 0.2, minRuns: 20 });
    expect(started.status).toBe(201);
    const items = Array.from({ length: 200 }, (_, i) => applicant(i));
    await eventually(async () => {
      await versionsOf('policy', baseId, items);
      expect((await rolloutOf('policy', baseId)).body.rollout).toBeNull();
    }, 10_000);
    // The registry commits the rollback, then rewrites the runnable index before it answers the
    // replica that asked: `GET .../rollout` may show it a moment before the runs follow.
    await eventually(async () => expect(new Set(await versionsOf('policy', baseId, items))).toEqual(new Set([1])));
    await eventually(async () => {
      const events = await auditOf(baseId);
      expect(events.at(-1)).toMatchObject({
        actor: { userId: 'rollout-guard' },
        details: {
          action: 'rolled_back',
          reason: 'guard',
          version: 2,
          previousVersion: 1,
          errorRates: { version: 1, previousVersion: 0, runs: 20 },
        },
      });
    });
  });
});

describe('flows', () => {
  it('roll out like policies; a node naming a base in a rollout runs its previous version', async () => {
    const { baseId: policyBase } = await publishedBase('Node');
    const def = (node: Record<string, unknown>): FlowDefinition => ({
      start: 'n1',
      nodes: {
        n1: { type: 'policy', ...node, onTrue: 'ok', onFalse: 'no' },
        ok: { type: 'return', value: true },
        no: { type: 'return', value: false },
      },
    });
    const created = await call(stack, 'POST', '/flow', {
      key: stack.adminKey,
      body: { name: 'F', definition: def({ baseId: policyBase }) },
    });
    expect(created.status).toBe(201);
    const flowBase = created.body.baseId as string;
    expect((await call(stack, 'PUT', `/flow/${created.body.flowId}`, { key: stack.adminKey, body: { status: 'published' } })).status).toBe(
      201,
    );
    const draft = await call(stack, 'GET', `/flow/${flowBase}/draft`, { key: stack.adminKey });
    const started = await call(stack, 'PUT', `/flow/${draft.body.flowId}`, {
      key: stack.adminKey,
      body: { status: 'published', rollout: { percent: 100, by: 'applicant.id' } },
    });
    expect(started.status).toBe(201);
    const items = Array.from({ length: 50 }, (_, i) => applicant(i, 19));
    expect(new Set(await versionsOf('flow', flowBase, items))).toEqual(new Set([2]));
    const runtime = await new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey }).local({ bases: [flowBase, policyBase] });
    open.push(runtime);
    expect((await runtime.runFlow(flowBase, items[0]!)).version).toBe(2);

    // the node's base in a rollout to 100 % of a stricter rule: direct runs get it, the flow's node keeps the previous version
    expect((await publishRollout(policyBase, rule(21), { percent: 100 })).status).toBe(201);
    const direct = await call(stack, 'POST', `/run/policy/${policyBase}`, { key: stack.adminKey, body: applicant(1, 19) });
    expect(direct.body).toMatchObject({ result: false, version: 2 });
    const viaFlow = await call(stack, 'POST', `/run/flow/${flowBase}`, { key: stack.adminKey, body: applicant(1, 19) });
    expect(viaFlow.body).toMatchObject({ result: true, version: 2 });
    await eventually(async () => expect(runtime.run(policyBase, applicant(1, 19)).version).toBe(2), 5000);
    expect((await runtime.runFlow(flowBase, applicant(1, 19))).result).toBe(true);

    // the SDK client's rollout calls
    const pat = new Arbiter({ baseUrl: stack.baseUrl, apiKey: key.pat });
    expect((await pat.flows.rollout(flowBase)).rollout).toMatchObject({ percent: 100, by: 'applicant.id', version: 2 });
    expect((await pat.flows.setRollout(flowBase, 60)).rollout?.percent).toBe(60);
    expect((await pat.flows.rollbackRollout(flowBase)).rollout).toBeNull();
    expect((await pat.policies.promoteRollout(policyBase)).rollout).toBeNull();
    expect(new Set(await versionsOf('flow', flowBase, items))).toEqual(new Set([1]));
    expect((await rolloutOf('flow', flowBase)).body.rollout).toBeNull();
  });
});

describe('a governed org', () => {
  it('starts a rollout only with the approved, unchanged review', async () => {
    const { baseId } = await publishedBase('Governed');
    expect((await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: true } })).status).toBe(200);
    try {
      const draft = await call(stack, 'GET', `/policy/${baseId}/draft`, { key: key.eddie });
      expect(
        (await call(stack, 'PUT', `/policy/${draft.body.policyId}`, { key: key.eddie, body: { status: 'draft', rule: rule(21) } })).status,
      ).toBe(200);
      const unreviewed = await call(stack, 'PUT', `/policy/${draft.body.policyId}`, {
        key: key.pat,
        body: { status: 'published', rollout: { percent: 10 } },
      });
      expect(unreviewed.status).toBe(409);
      expect(unreviewed.body.code).toBe('not_approved');
      expect((await rolloutOf('policy', baseId)).body.rollout).toBeNull();

      expect((await call(stack, 'PUT', `/policy/${draft.body.policyId}`, { key: key.eddie, body: { status: 'published' } })).status).toBe(
        202,
      );
      const early = await call(stack, 'POST', `/policy/${baseId}/review/publish`, { key: key.pat, body: { rollout: { percent: 10 } } });
      expect(early.status).toBe(409);
      expect((await call(stack, 'POST', `/policy/${baseId}/review/approve`, { key: key.pat })).status).toBe(200);
      const published = await call(stack, 'POST', `/policy/${baseId}/review/publish`, {
        key: key.pat,
        body: { rollout: { percent: 10, by: 'applicant.id' } },
      });
      expect(published.status).toBe(201);
      expect((await rolloutOf('policy', baseId)).body.rollout).toMatchObject({
        percent: 10,
        version: 2,
        previousVersion: 1,
        startedBy: 'pat',
      });
      // widening is a publisher's act, no review
      expect((await call(stack, 'POST', `/policy/${baseId}/rollout`, { key: key.pat, body: { percent: 40 } })).status).toBe(200);
    } finally {
      expect((await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: false } })).status).toBe(200);
    }
  });
});
