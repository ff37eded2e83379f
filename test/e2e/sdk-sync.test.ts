/**
 * Local runtimes stay current: publishes, draft edits of never-published bases, deletes,
 * restores and group membership reach a connected runtime; it keeps answering while the gateway is
 * down (and says how stale it is, or answers an error with `failClosed`), starts cold from its
 * cache file, stops syncing with an observable error when its key is revoked, and reports its runs
 * as `executed` events.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Arbiter, ArbiterError, isArbiterError, type LocalRuntime } from '@arbiter/sdk';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './harness.js';

let stack: Stack;
let arbiter: Arbiter;
const dir = mkdtempSync(path.join(tmpdir(), 'arbiter-sdk-sync-'));
const open: LocalRuntime[] = [];

beforeAll(async () => {
  stack = await startStack({
    services: ['registry', 'execution', 'audit', 'gateway'],
    env: { RUNNABLE_AUTH_RECHECK_MS: '300', RUNNABLE_POLL_MS: '500', EVENTS_FLUSH_MS: '200' },
  });
  arbiter = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
});
afterAll(async () => {
  await Promise.all(open.map((r) => r.close()));
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const rule = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
const adult = { applicant: { age: 20 } };

async function local(client: Arbiter, options: Parameters<Arbiter['local']>[0]): Promise<LocalRuntime> {
  const runtime = await client.local({ heartbeatMs: 500, reportIntervalMs: 200, ...options });
  open.push(runtime);
  return runtime;
}

/** The error a call throws. */
function thrown(call: () => unknown): ArbiterError {
  try {
    call();
  } catch (err) {
    if (isArbiterError(err)) return err;
    throw err;
  }
  throw new Error('expected an ArbiterError');
}

describe('a connected runtime', () => {
  it('follows a publish, a draft edit of a never-published base, a delete and a restore', async () => {
    const draft = await arbiter.policies.create({ name: 'followed', rule: rule(18) });
    const runtime = await local(arbiter, { bases: [draft.baseId] });
    expect(runtime.run(draft.baseId, adult)).toMatchObject({ result: true, version: null, policyId: draft.policyId });

    await arbiter.policies.update(draft.policyId, { status: 'draft', rule: rule(21) });
    await eventually(() => expect(runtime.run(draft.baseId, adult).result).toBe(false));

    await arbiter.policies.update(draft.policyId, { status: 'published', rule: rule(19) });
    await eventually(() => expect(runtime.run(draft.baseId, adult)).toMatchObject({ result: true, version: 1 }));

    await arbiter.policies.delete(draft.policyId);
    await eventually(() => expect(thrown(() => runtime.run(draft.baseId, adult))).toMatchObject({ status: 404, code: 'not_found' }));

    await arbiter.policies.restore(draft.baseId);
    await eventually(() => expect(runtime.run(draft.baseId, adult)).toMatchObject({ result: true, version: 1 }));
    expect(runtime.stats()).toMatchObject({ connected: true, syncing: true, syncError: null, source: 'service' });
  });

  it('follows a group: members added and removed, and the policies its flows name', async () => {
    const group = await arbiter.groups.create({ name: 'local group' });
    const p = await arbiter.policies.update((await arbiter.policies.create({ name: 'member', rule: rule(18) })).policyId, {
      status: 'published',
    });
    if (p.outcome !== 'published') throw new Error('expected a version');
    const runtime = await local(arbiter, { group: group.groupId });
    expect(runtime.stats().policies).toBe(0);

    await arbiter.groups.addMember(group.groupId, { memberId: p.record.baseId, memberType: 'policy' });
    await eventually(() => expect(runtime.run(p.record.baseId, adult).result).toBe(true));

    const flow = await arbiter.flows.create({
      name: 'member flow',
      definition: {
        start: 'a',
        nodes: {
          a: { type: 'policy', baseId: p.record.baseId, onTrue: 'y', onFalse: 'n' },
          y: { type: 'return', value: true },
          n: { type: 'custom', outcome: 'no' },
        },
      },
    });
    await arbiter.groups.addMember(group.groupId, { memberId: flow.baseId, memberType: 'flow' });
    await arbiter.groups.removeMember(group.groupId, p.record.baseId);
    await eventually(async () => expect((await runtime.runFlow(flow.baseId, { applicant: { age: 3 } })).result).toBe('no'));
    // the policy stays held for the flow that names it
    expect(runtime.stats()).toMatchObject({ flows: 1, policies: 1 });
  });

  it('reports its runs: executed events via sdk add up to them, by outcome', async () => {
    const p = await arbiter.policies.create({ name: 'reported', rule: rule(18) });
    const runtime = await local(arbiter, { bases: [p.baseId] });
    for (let i = 0; i < 250; i++) runtime.run(p.baseId, i % 5 === 0 ? {} : { applicant: { age: i % 2 === 0 ? 30 : 3 } }, { trace: false });
    await runtime.close();
    expect(runtime.stats().reports).toMatchObject({ unreportedRuns: 0, pendingReports: 0, reportedRuns: 250, droppedRuns: 0 });
    const totals = await eventually(async () => {
      const events = await arbiter.audit.list({ kind: ['executed'], resourceId: p.policyId }).toArray();
      const sum = (field: string) => events.reduce((n, e) => n + (e.details[field] as number), 0);
      expect(sum('count')).toBe(250);
      expect(events.every((e) => JSON.stringify(e.details.via) === '["sdk"]' && e.actor.userId === 'admin')).toBe(true);
      return { trueCount: sum('trueCount'), falseCount: sum('falseCount'), errorCount: sum('errorCount') };
    });
    expect(totals).toEqual({ trueCount: 100, falseCount: 100, errorCount: 50 });
  });
});

describe('without the gateway', () => {
  it('keeps answering from the last revision, says how stale it is, and catches up when the gateway is back', async () => {
    const p = await arbiter.policies.create({ name: 'outage', rule: rule(18) });
    const runtime = await local(arbiter, { bases: [p.baseId], cacheFile: path.join(dir, 'outage.json') });
    const before = JSON.stringify(runtime.run(p.baseId, adult));
    const closed = await local(arbiter, { bases: [p.baseId], maxStalenessMs: 1500, failClosed: true });

    await stack.stopService('gateway');
    try {
      await eventually(() => expect(runtime.stats().connected).toBe(false));
      expect(JSON.stringify(runtime.run(p.baseId, adult))).toBe(before);
      await eventually(() => expect(runtime.stats().stalenessMs).toBeGreaterThan(1000));
      expect(runtime.stats()).toMatchObject({ syncing: true, stale: false });
      expect(runtime.stats().syncError).toMatchObject({ code: 'dependency_unavailable' });

      // failClosed: an error once maxStalenessMs has passed
      await eventually(() =>
        expect(thrown(() => closed.run(p.baseId, adult))).toMatchObject({ status: 503, code: 'dependency_unavailable' }),
      );
      expect(closed.stats().stale).toBe(true);

      // a cold start: from the cache file, and only with one
      const cold = await local(new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey }), {
        bases: [p.baseId],
        cacheFile: path.join(dir, 'outage.json'),
      });
      expect(cold.stats()).toMatchObject({ source: 'cache', connected: false, revision: runtime.revision });
      expect(JSON.stringify(cold.run(p.baseId, adult))).toBe(before);
      await expect(arbiter.local({ bases: [p.baseId] })).rejects.toMatchObject({ code: 'dependency_unavailable' });
    } finally {
      await stack.startService('gateway');
    }
    await arbiter.policies.update(p.policyId, { status: 'published', rule: rule(30) });
    await eventually(() => expect(runtime.run(p.baseId, adult)).toMatchObject({ result: false, version: 1 }));
    await eventually(() => expect(closed.run(p.baseId, adult)).toMatchObject({ result: false, version: 1 }));
    expect(closed.stats()).toMatchObject({ stale: false, connected: true });
  });
});

describe('credentials', () => {
  it('a revoked key stops the sync with an ArbiterError the caller observes; runs keep the last state', async () => {
    const p = await arbiter.policies.create({ name: 'revoked', rule: rule(18) });
    const created = await arbiter.apiKeys.create({ name: 'local runtime', scopes: ['view'] });
    const errors: ArbiterError[] = [];
    const runtime = await local(new Arbiter({ baseUrl: stack.baseUrl, apiKey: created.key }), {
      bases: [p.baseId],
      onSyncError: (err) => errors.push(err),
    });
    await arbiter.apiKeys.revoke(created.apiKeyId);
    await eventually(() => expect(errors).toHaveLength(1));
    expect(errors[0]).toBeInstanceOf(ArbiterError);
    expect(errors[0]).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(runtime.stats()).toMatchObject({ syncing: false, connected: false });
    expect(runtime.run(p.baseId, adult).result).toBe(true);
    await expect(new Arbiter({ baseUrl: stack.baseUrl, apiKey: created.key }).local({ bases: [p.baseId] })).rejects.toMatchObject({
      status: 401,
    });
  });

  it('a key without `view` cannot load, and a bearer token is refused as runs refuse it', async () => {
    const created = await arbiter.apiKeys.create({ name: 'edit only', scopes: ['edit'] });
    await expect(new Arbiter({ baseUrl: stack.baseUrl, apiKey: created.key }).local({ all: true })).rejects.toMatchObject({
      status: 403,
      code: 'forbidden',
    });
  });
});
