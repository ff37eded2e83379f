/**
 * End-to-end: versions on a timeline (docs/design/timeline.md) through gateway → NATS → registry,
 * governance, execution and audit: a publish scheduled for a later instant, runs by base id that
 * pick by their clock (`?now=`) and by an instant (`?asOf=`) from the Redis runnable index alone,
 * cancelling a schedule, rolling back, flows alike, with governance off and on, and a deleted base.
 */

import { Arbiter } from '@arbiter/sdk';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from './harness.js';

let stack: Stack;
const key = {} as Record<'pat' | 'eddie' | 'vera', string>;

const ruleOf = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
const NINETEEN = { applicant: { age: 19 } };
const HOUR = 3600_000;

/** A counter of the execution service's /metrics, summed over its label sets (0 when absent). */
async function resolutions(source: 'redis' | 'registry'): Promise<number> {
  const text = await (await fetch(`${stack.opsUrl('execution')}/metrics`)).text();
  const m = new RegExp(`^arbiter_exec_resolutions_total\\{[^}]*source="${source}"[^}]*\\} (\\d+)$`, 'm').exec(text);
  return m === null ? 0 : Number(m[1]);
}

/** Creates a policy with `rule` as the publisher and publishes it: its base id and version 1's record. */
async function publishedPolicy(rule: string): Promise<{ baseId: string; v1: Record<string, unknown> }> {
  const created = await call(stack, 'POST', '/policy', { key: key.pat, body: { name: `p-${Math.random().toString(36).slice(2)}`, rule } });
  expect(created.status).toBe(201);
  const v1 = await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: key.pat, body: { status: 'published' } });
  expect(v1.status).toBe(201);
  return { baseId: created.body.baseId as string, v1: v1.body };
}

/** Opens the base's draft and publishes it with `rule`, at once or at `effectiveFrom`: the answer. */
async function publishNext(kind: 'policy' | 'flow', baseId: string, patch: Record<string, unknown>, who = key.pat) {
  const draft = await call(stack, 'GET', `/${kind}/${baseId}/draft`, { key: key.pat });
  expect([200, 201]).toContain(draft.status);
  return call(stack, 'PUT', `/${kind}/${baseId}`, { key: who, body: { status: 'published', ...patch } });
}

const runPolicy = (baseId: string, query = '') =>
  call(stack, 'POST', `/run/policy/${baseId}${query}`, { key: stack.adminKey, body: NINETEEN });
const iso = (ms: number) => new Date(ms).toISOString();
const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'audit', 'gateway'] });
  key.pat = await memberKey(stack, 'pat', 'publisher', ['view', 'edit', 'publish']);
  key.eddie = await memberKey(stack, 'eddie', 'editor', ['view', 'edit']);
  key.vera = await memberKey(stack, 'vera', 'viewer', ['view']);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('scheduled versions (governance off)', () => {
  it('a scheduled version takes effect at its instant, picked by the run clock from Redis alone', async () => {
    const { baseId } = await publishedPolicy(ruleOf(18));
    const at = Date.now() + HOUR;
    const scheduled = await publishNext('policy', baseId, { rule: ruleOf(21), effectiveFrom: iso(at) });
    expect(scheduled.status).toBe(201);
    expect(scheduled.body).toMatchObject({ version: 2, status: 'published' });

    // now: version 1 still runs; the answer names it
    const before = await runPolicy(baseId);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ result: true, version: 1 });

    // a moving clock through `now`: ±50 ms around the instant, no registry request at that moment
    const fromRegistry = await resolutions('registry');
    expect((await runPolicy(baseId, q({ now: iso(at - 50) }))).body).toMatchObject({ result: true, version: 1 });
    expect((await runPolicy(baseId, q({ now: iso(at - 1) }))).body).toMatchObject({ version: 1 });
    expect((await runPolicy(baseId, q({ now: iso(at) }))).body).toMatchObject({ result: false, version: 2 });
    expect((await runPolicy(baseId, q({ now: iso(at + 50) }))).body).toMatchObject({ result: false, version: 2 });
    expect(await resolutions('registry')).toBe(fromRegistry);

    // the versions list shows each version's interval
    const versions = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: key.vera });
    expect(versions.status).toBe(200);
    const [v2, v1] = versions.body.items as Record<string, unknown>[];
    expect(v2).toMatchObject({ version: 2, effectiveFrom: iso(at), effectiveUntil: null, cancelled: false, rollbackOf: null });
    expect(v1).toMatchObject({ version: 1, effectiveUntil: iso(at), cancelled: false });
  });

  it('refuses a schedule in the past (400), a draft with a schedule (400), and viewers and editors (403); nothing changes', async () => {
    const { baseId } = await publishedPolicy(ruleOf(18));
    const draft = await call(stack, 'GET', `/policy/${baseId}/draft`, { key: key.pat });
    expect(draft.status).toBe(201);
    const past = await call(stack, 'PUT', `/policy/${baseId}`, {
      key: key.pat,
      body: { status: 'published', rule: ruleOf(30), effectiveFrom: iso(Date.now() - 1000) },
    });
    expect(past.status).toBe(400);
    expect(past.body).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ path: 'effectiveFrom' })] });
    const notAPublish = await call(stack, 'PUT', `/policy/${baseId}`, {
      key: key.pat,
      body: { status: 'draft', effectiveFrom: iso(Date.now() + HOUR) },
    });
    expect(notAPublish.status).toBe(400);
    const malformed = await call(stack, 'PUT', `/policy/${baseId}`, { key: key.pat, body: { status: 'published', effectiveFrom: 'soon' } });
    expect(malformed.status).toBe(400);
    for (const who of [key.vera, key.eddie]) {
      const refused = await call(stack, 'PUT', `/policy/${baseId}`, {
        key: who,
        body: { status: 'published', effectiveFrom: iso(Date.now() + HOUR) },
      });
      expect(refused.status).toBe(403);
    }
    const versions = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: key.pat });
    expect(versions.body.items.map((r: { version: number | null }) => r.version)).toEqual([null, 1]);
    expect(versions.body.items[0].rule).toBe(ruleOf(18));
    expect((await runPolicy(baseId)).body).toMatchObject({ result: true, version: 1 });
  });

  it('cancels a schedule before its instant (audited), never after: 409 started, 404 unknown, 403 viewer', async () => {
    const { baseId } = await publishedPolicy(ruleOf(18));
    const at = Date.now() + HOUR;
    expect((await publishNext('policy', baseId, { rule: ruleOf(21), effectiveFrom: iso(at) })).status).toBe(201);

    expect((await call(stack, 'DELETE', `/policy/${baseId}/schedule/2`, { key: key.vera })).status).toBe(403);
    expect((await call(stack, 'DELETE', `/policy/${baseId}/schedule/2`)).status).toBe(401);
    expect((await call(stack, 'DELETE', `/policy/${baseId}/schedule/9`, { key: key.pat })).status).toBe(404);
    expect((await call(stack, 'DELETE', `/policy/00000000-0000-4000-8000-000000000000/schedule/2`, { key: key.pat })).status).toBe(404);
    expect((await call(stack, 'DELETE', `/policy/${baseId}/schedule/zero`, { key: key.pat })).status).toBe(400);
    const started = await call(stack, 'DELETE', `/policy/${baseId}/schedule/1`, { key: key.pat });
    expect(started.status).toBe(409);
    expect(started.body.detail ?? started.body.message ?? JSON.stringify(started.body)).toMatch(/started/);

    const cancelled = await call(stack, 'DELETE', `/policy/${baseId}/schedule/2`, { key: key.pat });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ version: 2 });
    expect((await call(stack, 'DELETE', `/policy/${baseId}/schedule/2`, { key: key.pat })).status).toBe(409);

    // after its instant version 1 still runs: version 2 never does by base id
    expect((await runPolicy(baseId, q({ now: iso(at + 1000) }))).body).toMatchObject({ result: true, version: 1 });
    const versions = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: key.pat });
    expect(versions.body.items[0]).toMatchObject({ version: 2, cancelled: true, effectiveUntil: null });
    expect(versions.body.items[1]).toMatchObject({ version: 1, effectiveUntil: null });

    await eventually(async () => {
      const audit = await call(stack, 'GET', `/audit?kind=${encodeURIComponent('schedule cancelled')}&baseId=${baseId}`, {
        key: stack.adminKey,
      });
      expect(audit.body.items).toEqual([
        expect.objectContaining({
          kind: 'schedule cancelled',
          actor: expect.objectContaining({ userId: 'pat' }),
          details: { version: 2, effectiveFrom: iso(at) },
        }),
      ]);
    });
  });
});

describe('as-of runs', () => {
  it('runs the version runnable at an instant, evaluated at it, from the runnable index without the registry', async () => {
    const { baseId, v1 } = await publishedPolicy('An **applicant** is recent if the __seen__ of the **applicant** is within 1 hour.');
    const t1 = Date.parse(v1.publishedAt as string);
    const v2 = await publishNext('policy', baseId, { rule: ruleOf(21) });
    expect(v2.status).toBe(201);
    const t2 = Date.parse(v2.body.publishedAt as string);
    expect(t2).toBeGreaterThan(t1);

    const fromRegistry = await resolutions('registry');
    // before the first version: 404 naming it
    const tooEarly = await runPolicy(baseId, q({ asOf: iso(t1 - 60_000) }));
    expect(tooEarly.status).toBe(404);
    expect(JSON.stringify(tooEarly.body)).toMatch(/version 1/);
    // between the two: version 1, evaluated with `now` pinned to asOf
    const asOf = iso(t1 + Math.floor((t2 - t1) / 2));
    const seen = { applicant: { seen: asOf } };
    const between = await call(stack, 'POST', `/run/policy/${baseId}${q({ asOf })}`, { key: stack.adminKey, body: seen });
    expect(between.status).toBe(200);
    expect(between.body).toMatchObject({ version: 1, result: true });
    // the same asOf with a `now` a day later keeps the version and moves the clock
    const withNow = await call(stack, 'POST', `/run/policy/${baseId}${q({ asOf, now: iso(t1 + 24 * HOUR) })}`, {
      key: stack.adminKey,
      body: seen,
    });
    expect(withNow.status).toBe(200);
    expect(withNow.body).toMatchObject({ version: 1, result: false });
    // at and after the second: version 2
    expect((await runPolicy(baseId, q({ asOf: iso(t2) }))).body).toMatchObject({ version: 2, result: false });
    expect(await resolutions('registry')).toBe(fromRegistry);

    // batches take it too
    const batch = await call(stack, 'POST', `/run/policy/${baseId}/batch${q({ asOf: iso(t2 + 1) })}`, {
      key: stack.adminKey,
      body: { items: [NINETEEN, { applicant: { age: 30 } }] },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results.map((r: { version: number; result: boolean }) => [r.version, r.result])).toEqual([
      [2, false],
      [2, true],
    ]);

    // malformed
    expect((await runPolicy(baseId, q({ asOf: 'yesterday' }))).status).toBe(400);
  });

  it('a deleted base answers 404 whatever asOf; restored, its history is back', async () => {
    const { baseId, v1 } = await publishedPolicy(ruleOf(18));
    const t1 = Date.parse(v1.publishedAt as string);
    expect((await call(stack, 'DELETE', `/policy/${baseId}`, { key: stack.adminKey })).status).toBe(204);
    for (const asOf of [iso(t1 + 1), iso(Date.now())]) expect((await runPolicy(baseId, q({ asOf }))).status).toBe(404);
    expect((await runPolicy(baseId)).status).toBe(404);
    expect((await call(stack, 'POST', `/policy/${baseId}/rollback`, { key: key.pat, body: { toVersion: 1 } })).status).toBe(404);
    expect((await call(stack, 'DELETE', `/policy/${baseId}/schedule/1`, { key: key.pat })).status).toBe(404);
    expect((await call(stack, 'POST', `/policy/${baseId}/restore`, { key: stack.adminKey })).status).toBe(200);
    expect((await runPolicy(baseId, q({ asOf: iso(t1 + 1) }))).body).toMatchObject({ version: 1, result: true });
  });
});

describe('rollback', () => {
  it('makes an earlier version runnable again as a new version, at once or at an instant', async () => {
    const { baseId } = await publishedPolicy(ruleOf(18));
    expect((await publishNext('policy', baseId, { rule: ruleOf(21) })).status).toBe(201);
    expect((await runPolicy(baseId)).body).toMatchObject({ version: 2, result: false });

    const back = await call(stack, 'POST', `/policy/${baseId}/rollback`, { key: key.pat, body: { toVersion: 1 } });
    expect(back.status).toBe(201);
    expect(back.body).toMatchObject({ version: 3, rule: ruleOf(18), basedOnVersion: 1, status: 'published' });
    expect((await runPolicy(baseId)).body).toMatchObject({ version: 3, result: true });

    const at = Date.now() + HOUR;
    const later = await call(stack, 'POST', `/policy/${baseId}/rollback`, { key: key.pat, body: { toVersion: 2, effectiveFrom: iso(at) } });
    expect(later.status).toBe(201);
    expect((await runPolicy(baseId)).body).toMatchObject({ version: 3 });
    expect((await runPolicy(baseId, q({ now: iso(at) }))).body).toMatchObject({ version: 4, result: false });

    const versions = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: key.vera });
    expect(versions.body.items.slice(0, 2)).toEqual([
      expect.objectContaining({ version: 4, rollbackOf: 2, effectiveFrom: iso(at) }),
      expect.objectContaining({ version: 3, rollbackOf: 1, effectiveUntil: iso(at) }),
    ]);
    await eventually(async () => {
      const audit = await call(stack, 'GET', `/audit?kind=published&baseId=${baseId}`, { key: stack.adminKey });
      expect(audit.body.items.map((e: { details: unknown }) => e.details)).toEqual(
        expect.arrayContaining([
          { version: 3, rollbackOf: 1 },
          { version: 4, rollbackOf: 2, effectiveFrom: iso(at) },
        ]),
      );
    });
  });

  it('refuses an unknown version (404), editors and viewers (403), no key (401), a malformed body (400), a past instant (400)', async () => {
    const { baseId } = await publishedPolicy(ruleOf(18));
    const path = `/policy/${baseId}/rollback`;
    expect((await call(stack, 'POST', path, { key: key.pat, body: { toVersion: 7 } })).status).toBe(404);
    expect((await call(stack, 'POST', path, { key: key.eddie, body: { toVersion: 1 } })).status).toBe(403);
    expect((await call(stack, 'POST', path, { key: key.vera, body: { toVersion: 1 } })).status).toBe(403);
    expect((await call(stack, 'POST', path, { body: { toVersion: 1 } })).status).toBe(401);
    expect((await call(stack, 'POST', path, { key: key.pat, body: { toVersion: 'one' } })).status).toBe(400);
    expect((await call(stack, 'POST', path, { key: key.pat, body: { toVersion: 1, extra: true } })).status).toBe(400);
    expect((await call(stack, 'POST', path, { key: key.pat, body: { toVersion: 1, effectiveFrom: iso(Date.now() - 5) } })).status).toBe(
      400,
    );
    const other = await call(stack, 'POST', `/policy/00000000-0000-4000-8000-000000000000/rollback`, {
      key: key.pat,
      body: { toVersion: 1 },
    });
    expect(other.status).toBe(404);
    const versions = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: key.pat });
    expect(versions.body.items.map((r: { version: number }) => r.version)).toEqual([1]);
  });
});

describe('flows', () => {
  it('schedule, as-of and rollback work for flows; a base-following node picks at the run instant', async () => {
    const { baseId: policyBase } = await publishedPolicy(ruleOf(18));
    const definition = (outcome: string) => ({
      start: 'n1',
      nodes: {
        n1: { type: 'policy', baseId: policyBase, onTrue: 'ok', onFalse: 'no' },
        ok: { type: 'custom', outcome },
        no: { type: 'custom', outcome: 'refused' },
      },
    });
    const created = await call(stack, 'POST', '/flow', { key: key.pat, body: { name: 'f', definition: definition('adult') } });
    expect(created.status).toBe(201);
    const flowBase = created.body.baseId as string;
    const v1 = await call(stack, 'PUT', `/flow/${created.body.flowId}`, { key: key.pat, body: { status: 'published' } });
    expect(v1.status).toBe(201);
    const t1 = Date.parse(v1.body.publishedAt as string);

    const at = Date.now() + HOUR;
    expect((await publishNext('flow', flowBase, { definition: definition('grown-up'), effectiveFrom: iso(at) })).status).toBe(201);
    // the policy the node follows moves on too
    expect((await publishNext('policy', policyBase, { rule: ruleOf(21) })).status).toBe(201);

    const runFlow = (query: string) => call(stack, 'POST', `/run/flow/${flowBase}${query}`, { key: stack.adminKey, body: NINETEEN });
    expect((await runFlow('')).body).toMatchObject({ version: 1, result: 'refused' });
    // as of t1 + 1: flow version 1, its node at policy version 1
    expect((await runFlow(q({ asOf: iso(t1 + 1) }))).body).toMatchObject({ version: 1, result: 'adult' });
    expect((await runFlow(q({ now: iso(at) }))).body).toMatchObject({ version: 2, result: 'refused' });

    expect((await call(stack, 'DELETE', `/flow/${flowBase}/schedule/2`, { key: key.pat })).status).toBe(200);
    expect((await runFlow(q({ now: iso(at) }))).body).toMatchObject({ version: 1 });
    const back = await call(stack, 'POST', `/flow/${flowBase}/rollback`, { key: key.pat, body: { toVersion: 2 } });
    expect(back.status).toBe(201);
    expect(back.body).toMatchObject({ version: 3, basedOnVersion: 2 });
    expect((await runFlow('')).body).toMatchObject({ version: 3 });
    expect((await call(stack, 'POST', `/flow/${flowBase}/rollback`, { key: key.pat, body: { toVersion: 9 } })).status).toBe(404);
    expect((await call(stack, 'POST', `/flow/${flowBase}/rollback`, { key: key.vera, body: { toVersion: 1 } })).status).toBe(403);
  });
});

describe('the SDK', () => {
  it("the local runtime switches at a scheduled version's instant by its own clock, with no request", async () => {
    const { baseId } = await publishedPolicy(ruleOf(18));
    const arbiter = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
    const runtime = await arbiter.local({ bases: [baseId], heartbeatMs: 500 });
    try {
      expect(runtime.run(baseId, NINETEEN)).toMatchObject({ version: 1, result: true });
      const at = Date.now() + 3000;
      expect((await publishNext('policy', baseId, { rule: ruleOf(21), effectiveFrom: iso(at) })).status).toBe(201);
      const revision = await eventually(async () => {
        const held = runtime.revision;
        // the schedule has arrived: a run at the instant sees version 2 while now still runs version 1
        expect(runtime.run(baseId, NINETEEN, { now: iso(at) })).toMatchObject({ version: 2, result: false });
        return held;
      });
      // `run` is synchronous: a run cannot make a request. ±50 ms around the instant:
      expect(runtime.run(baseId, NINETEEN, { now: iso(at - 50), trace: false })).toMatchObject({ version: 1, result: true });
      expect(runtime.run(baseId, NINETEEN, { now: iso(at + 50), trace: false })).toMatchObject({ version: 2, result: false });
      // the real clock passes the instant: version 2 runs, with no new revision fetched for it
      await eventually(() => expect(runtime.run(baseId, NINETEEN)).toMatchObject({ version: 2, result: false }), { timeoutMs: 10_000 });
      expect(runtime.revision).toBe(revision);
      expect(() => runtime.run(baseId, NINETEEN, { now: 'later' })).toThrow(/now/);

      // the client passes asOf and rolls back
      expect(await arbiter.policies.run(baseId, NINETEEN, { asOf: iso(at - 1) })).toMatchObject({ version: 1 });
      expect(await arbiter.policies.rollback(baseId, 1)).toMatchObject({ version: 3 });
      const next = Date.now() + HOUR;
      expect((await publishNext('policy', baseId, { rule: ruleOf(30), effectiveFrom: iso(next) })).status).toBe(201);
      expect(await arbiter.policies.cancelSchedule(baseId, 4)).toMatchObject({ version: 4 });
    } finally {
      await runtime.close();
    }
  });
});

describe('with governance on', () => {
  beforeAll(async () => {
    expect((await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: true } })).status).toBe(200);
  });
  afterAll(async () => {
    await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: false } });
  });

  it('a reviewed draft is published at its instant; a publisher rolls back without a new review', async () => {
    const created = await call(stack, 'POST', '/policy', { key: key.eddie, body: { name: 'governed', rule: ruleOf(18) } });
    const baseId = created.body.baseId as string;
    // a schedule belongs to the publish step, not to the submission
    const early = await call(stack, 'PUT', `/policy/${baseId}`, {
      key: key.eddie,
      body: { status: 'published', effectiveFrom: iso(Date.now() + HOUR) },
    });
    expect(early.status).toBe(400);
    expect((await call(stack, 'PUT', `/policy/${baseId}`, { key: key.eddie, body: { status: 'published' } })).status).toBe(202);
    expect((await call(stack, 'POST', `/policy/${baseId}/review/approve`, { key: key.pat })).status).toBe(200);
    const past = await call(stack, 'POST', `/policy/${baseId}/review/publish`, {
      key: key.pat,
      body: { effectiveFrom: iso(Date.now() - HOUR) },
    });
    expect(past.status).toBe(400);
    const at = Date.now() + HOUR;
    const published = await call(stack, 'POST', `/policy/${baseId}/review/publish`, { key: key.pat, body: { effectiveFrom: iso(at) } });
    expect(published.status).toBe(201);
    expect(published.body).toMatchObject({ version: 1 });

    // nothing is in effect before the first version's instant
    const before = await runPolicy(baseId);
    expect(before.status).toBe(404);
    expect(JSON.stringify(before.body)).toMatch(/version 1/);
    expect((await runPolicy(baseId, q({ now: iso(at) }))).body).toMatchObject({ version: 1, result: true });

    // a second reviewed version now, then a rollback to 1's content with no review
    const draft = await call(stack, 'GET', `/policy/${baseId}/draft`, { key: key.eddie });
    expect(draft.status).toBe(201);
    expect(
      (await call(stack, 'PUT', `/policy/${baseId}`, { key: key.eddie, body: { status: 'published', rule: ruleOf(21) } })).status,
    ).toBe(202);
    expect((await call(stack, 'POST', `/policy/${baseId}/review/approve`, { key: key.pat })).status).toBe(200);
    expect((await call(stack, 'POST', `/policy/${baseId}/review/publish`, { key: key.pat })).status).toBe(201);
    expect((await runPolicy(baseId)).body).toMatchObject({ version: 2, result: false });
    const back = await call(stack, 'POST', `/policy/${baseId}/rollback`, { key: key.pat, body: { toVersion: 1 } });
    expect(back.status).toBe(201);
    expect((await runPolicy(baseId)).body).toMatchObject({ version: 3, result: true });
    expect((await call(stack, 'POST', `/policy/${baseId}/rollback`, { key: key.eddie, body: { toVersion: 2 } })).status).toBe(403);
  });
});
