/**
 * Shadow runs end to end (docs/design/shadow-runs.md): the built execution, registry, audit and
 * gateway services. A base's candidate draft runs on the sampled runs by base id after their
 * answers, its counts land in the report, its changed runs are kept as masked examples for readers
 * with the `audit` right, and it never changes an answer nor leaves a decision record or run of its own.
 */
import { eventually } from '@arbiter/test-kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, SHARED_SERVERS, startStack, type Stack } from './harness.js';

let stack: Stack;
const key = { admin: '', auditor: '', editor: '', viewer: '', orgB: '' };

const LIVE = 'An **applicant** is approved if the __score__ of the **applicant** is at least 600.';
const CANDIDATE = 'An **applicant** is approved if the __score__ of the **applicant** is at least 650.';

/** Polls `probe` (test-kit's `eventually`) until it gives a value. */
function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  return eventually(
    async () => {
      const got = await probe();
      if (got === undefined) throw new Error(`timed out waiting for ${what}`);
      return got;
    },
    { timeoutMs: ms, intervalMs: 100 },
  );
}

async function ok(status: number, method: string, url: string, body?: unknown, k = key.admin): Promise<any> {
  const res = await call(stack, method, url, { key: k, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** A published policy (version 1 runs `LIVE`) with a draft running `CANDIDATE`: its base id and the draft's record id. */
async function policyWithDraft(name: string, k = key.admin): Promise<{ baseId: string; draftId: string; v1: string }> {
  const created = await ok(201, 'POST', '/policy', { name, rule: LIVE }, k);
  await ok(201, 'PUT', `/policy/${created.policyId}`, { status: 'published' }, k);
  const draft = await ok(201, 'GET', `/policy/${created.baseId}/draft`, undefined, k);
  await ok(200, 'PUT', `/policy/${draft.policyId}`, { status: 'draft', rule: CANDIDATE }, k);
  return { baseId: created.baseId, draftId: draft.policyId, v1: created.policyId };
}

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'governance', 'gateway'],
    env: { EXEC_SHADOW_FLUSH_MS: '50', EVENTS_FLUSH_MS: '200', DECISIONS_FLUSH_MS: '50', DECISIONS_SETTINGS_TTL_MS: '200' },
  });
  key.admin = stack.adminKey;
  key.auditor = await memberKey(stack, 'audrey', 'auditor', ['view', 'audit']);
  key.editor = await memberKey(stack, 'eddie', 'editor', ['view', 'edit']);
  key.viewer = await memberKey(stack, 'vera', 'viewer', ['view']);
  const created = stack.admin(['create-org', 'globex', '--admin', 'gus']);
  expect(created.status, created.stderr).toBe(0);
  key.orgB = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
}, 120_000);
afterAll(async () => stack?.stop());

describe('shadow runs', () => {
  it('counts exactly the answers the candidate changes (4 of 10, single and batch runs), at sampleRate 1, and changes no answer', async () => {
    const { baseId, draftId } = await policyWithDraft('Exact');
    await ok(200, 'PUT', `/decisions/settings/${baseId}`, { masks: ['applicant.ssn'] });
    const set = await ok(200, 'PUT', `/policy/${baseId}/shadow`, { recordId: draftId, sampleRate: 1 }, key.editor);
    expect(set).toMatchObject({ baseId, candidate: { recordId: draftId, version: null, status: 'draft' }, state: 'running', sampled: 0 });

    const scores = [500, 550, 600, 610, 620, 640, 650, 700, 800, 900];
    const data = scores.map((score) => ({ applicant: { score, ssn: `ssn-${score}` } }));
    // Six single runs and a batch of four: the live answers are version 1's (at least 600).
    for (const d of data.slice(0, 6)) {
      const res = await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: d });
      expect(res.status).toBe(200);
      expect(res.body.result).toBe(d.applicant.score >= 600);
      expect(res.body.version).toBe(1);
    }
    const batch = await call(stack, 'POST', `/run/policy/${baseId}/batch`, { key: key.admin, body: { items: data.slice(6) } });
    expect(batch.status).toBe(200);
    expect(batch.body.results.map((r: { result: boolean }) => r.result)).toEqual([true, true, true, true]);

    const report = await until(async () => {
      const r = await ok(200, 'GET', `/policy/${baseId}/shadow`, undefined, key.auditor);
      return r.compared + r.dropped === 10 ? r : undefined;
    }, 'ten compared runs');
    expect(report).toMatchObject({
      sampled: 10,
      compared: 10,
      same: 6,
      changed: 4,
      errors: 0,
      dropped: 0,
      transitions: { 'true→false': 4 },
    });
    expect(Object.keys(report.transitions)).toEqual(['true→false']);
    // Examples: the changed runs, inputs masked as decision records are, for the `audit` right only.
    const examples = await until(async () => {
      const r = await ok(200, 'GET', `/policy/${baseId}/shadow`, undefined, key.auditor);
      return r.examples.length === 4 ? r.examples : undefined;
    }, 'four examples');
    expect(examples.map((e: any) => e.input.applicant.score).sort()).toEqual([600, 610, 620, 640]);
    for (const e of examples) {
      expect(e).toMatchObject({ masked: true, live: { result: true, errorCode: null }, candidate: { result: false, errorCode: null } });
      expect(e.input.applicant.ssn).toBe('***');
    }
    const asViewer = await ok(200, 'GET', `/policy/${baseId}/shadow`, undefined, key.viewer);
    expect(asViewer).toMatchObject({ changed: 4, examplesHidden: true });
    expect(asViewer.examples).toBeUndefined();
    const asEditor = await ok(200, 'GET', `/policy/${baseId}/shadow`, undefined, key.editor);
    expect(asEditor.examples).toBeUndefined();

    // The draft's review summary carries the counts beside its impact report.
    const review = await ok(200, 'GET', `/policy/${draftId}/review`, undefined, key.viewer);
    expect(review.shadow).toEqual({
      sampled: 10,
      compared: 10,
      same: 6,
      changed: 4,
      errors: 0,
      dropped: 0,
      transitions: { 'true→false': 4 },
      state: 'running',
      sampleRate: 1,
      since: report.since,
    });

    // The candidate is neither a decision nor a run: ten decisions, all of version 1.
    const decisions = await until(async () => {
      const page = await ok(200, 'GET', `/decisions?baseId=${baseId}&limit=100`, undefined, key.auditor);
      return page.items.length >= 10 ? page.items : undefined;
    }, 'ten decisions');
    expect(decisions).toHaveLength(10);
    expect(decisions.every((d: { version: number }) => d.version === 1)).toBe(true);
  });

  it('stops, keeps the report readable, audits start and stop, and restarts from zero', async () => {
    const { baseId, draftId } = await policyWithDraft('Stop');
    await ok(200, 'PUT', `/policy/${baseId}/shadow`, {
      recordId: draftId,
      sampleRate: 1,
      until: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await ok(200, 'POST', `/run/policy/${baseId}`, { applicant: { score: 620 } });
    await until(async () => ((await ok(200, 'GET', `/policy/${baseId}/shadow`)).changed === 1 ? true : undefined), 'one change');
    const stopped = await ok(200, 'DELETE', `/policy/${baseId}/shadow`, undefined, key.editor);
    expect(stopped).toMatchObject({ state: 'stopped', changed: 1, stoppedAt: expect.any(String) });
    expect((await call(stack, 'DELETE', `/policy/${baseId}/shadow`, { key: key.admin })).status).toBe(404);
    // Runs no longer shadow: the count stays (a later start counts from zero).
    expect((await ok(200, 'POST', `/run/policy/${baseId}`, { applicant: { score: 620 } })).result).toBe(true);
    expect((await ok(200, 'GET', `/policy/${baseId}/shadow`, undefined, key.viewer)).state).toBe('stopped');
    const again = await ok(200, 'PUT', `/policy/${baseId}/shadow`, { recordId: draftId, sampleRate: 0.5 });
    expect(again).toMatchObject({ state: 'running', sampled: 0, changed: 0, sampleRate: 0.5 });
    const trail = await until(async () => {
      const page = await ok(200, 'GET', `/audit?baseId=${baseId}&kind=shadow%20started&kind=shadow%20stopped`);
      return page.items.length === 3 ? page.items : undefined;
    }, 'three shadow events');
    expect(trail.map((e: { kind: string }) => e.kind)).toEqual(['shadow started', 'shadow stopped', 'shadow started']);
    expect(trail[1].details).toMatchObject({ recordId: draftId, changed: 1 });
  });

  it('shadows flows by base id: the path and result are compared', async () => {
    const created = await ok(201, 'POST', '/flow', {
      name: 'Flow shadow',
      definition: { start: 'r', nodes: { r: { type: 'return', value: true } } },
    });
    await ok(201, 'PUT', `/flow/${created.flowId}`, { status: 'published' });
    const draft = await ok(201, 'GET', `/flow/${created.baseId}/draft`);
    await ok(200, 'PUT', `/flow/${draft.flowId}`, {
      status: 'draft',
      definition: { start: 'r', nodes: { r: { type: 'return', value: false } } },
    });
    await ok(200, 'PUT', `/flow/${created.baseId}/shadow`, { recordId: draft.flowId, sampleRate: 1 }, key.editor);
    for (let i = 0; i < 3; i++) expect((await ok(200, 'POST', `/run/flow/${created.baseId}`, { n: i })).result).toBe(true);
    const report = await until(async () => {
      const r = await ok(200, 'GET', `/flow/${created.baseId}/shadow`);
      return r.compared === 3 ? r : undefined;
    }, 'three compared flow runs');
    expect(report).toMatchObject({ sampled: 3, changed: 3, same: 0, dropped: 0, transitions: { 'true→false': 3 } });
  });

  it('refuses viewers (403), missing credentials (401), malformed bodies (400) and changes nothing', async () => {
    const { baseId, draftId } = await policyWithDraft('Refusals');
    expect(
      (await call(stack, 'PUT', `/policy/${baseId}/shadow`, { key: key.viewer, body: { recordId: draftId, sampleRate: 1 } })).status,
    ).toBe(403);
    expect((await call(stack, 'DELETE', `/policy/${baseId}/shadow`, { key: key.viewer })).status).toBe(403);
    expect((await call(stack, 'PUT', `/policy/${baseId}/shadow`, { body: { recordId: draftId, sampleRate: 1 } })).status).toBe(401);
    expect((await call(stack, 'GET', `/policy/${baseId}/shadow`)).status).toBe(401);
    for (const body of [
      { recordId: draftId, sampleRate: 2 },
      { recordId: draftId, sampleRate: -0.1 },
      { recordId: draftId, sampleRate: 1, until: 'tomorrow' },
      { recordId: draftId, sampleRate: 1, until: new Date(Date.now() - 60_000).toISOString() },
      { recordId: 'not-a-uuid', sampleRate: 1 },
      { sampleRate: 1 },
      { recordId: draftId, sampleRate: 1, extra: true },
    ]) {
      const res = await call(stack, 'PUT', `/policy/${baseId}/shadow`, { key: key.admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const raw = await call(stack, 'PUT', `/policy/${baseId}/shadow`, {
      key: key.admin,
      rawBody: '{"recordId":',
      headers: { 'content-type': 'application/json' },
    });
    expect(raw.status).toBe(400);
    // Nothing was started by any of them.
    expect((await call(stack, 'GET', `/policy/${baseId}/shadow`, { key: key.admin })).status).toBe(404);
  });

  it('answers 400 for a record of another base or the current record, 404 for unknown, other-org and deleted bases', async () => {
    const a = await policyWithDraft('Base A');
    const b = await policyWithDraft('Base B');
    const other = await call(stack, 'PUT', `/policy/${a.baseId}/shadow`, { key: key.admin, body: { recordId: b.draftId, sampleRate: 1 } });
    expect(other.status).toBe(400);
    expect(other.body.detail).toContain('another base');
    const current = await call(stack, 'PUT', `/policy/${a.baseId}/shadow`, { key: key.admin, body: { recordId: a.v1, sampleRate: 1 } });
    expect(current.status).toBe(400);
    const unknown = '019ad000-0000-7000-8000-000000000000';
    expect(
      (await call(stack, 'PUT', `/policy/${unknown}/shadow`, { key: key.admin, body: { recordId: a.draftId, sampleRate: 1 } })).status,
    ).toBe(404);
    expect(
      (await call(stack, 'PUT', `/policy/${a.baseId}/shadow`, { key: key.admin, body: { recordId: unknown, sampleRate: 1 } })).status,
    ).toBe(404);
    expect(
      (await call(stack, 'PUT', `/policy/${a.baseId}/shadow`, { key: key.orgB, body: { recordId: a.draftId, sampleRate: 1 } })).status,
    ).toBe(404);
    expect((await call(stack, 'GET', `/policy/${a.baseId}/shadow`, { key: key.orgB })).status).toBe(404);
    // A policy base is not a flow base.
    expect((await call(stack, 'GET', `/flow/${a.baseId}/shadow`, { key: key.admin })).status).toBe(404);
    // A deleted base: its shadow is gone with it (404), its runs 404 as before.
    await ok(200, 'PUT', `/policy/${b.baseId}/shadow`, { recordId: b.draftId, sampleRate: 1 });
    await ok(204, 'DELETE', `/policy/${b.baseId}`);
    expect((await call(stack, 'GET', `/policy/${b.baseId}/shadow`, { key: key.admin })).status).toBe(404);
    expect(
      (await call(stack, 'PUT', `/policy/${b.baseId}/shadow`, { key: key.admin, body: { recordId: b.draftId, sampleRate: 1 } })).status,
    ).toBe(404);
    expect((await call(stack, 'DELETE', `/policy/${b.baseId}/shadow`, { key: key.admin })).status).toBe(404);
    expect((await call(stack, 'POST', `/run/policy/${b.baseId}`, { key: key.admin, body: { applicant: { score: 1 } } })).status).toBe(404);
  });

  it('stops shadowing without an error to the caller when the candidate is gone from the runnable index', async () => {
    const { baseId, draftId } = await policyWithDraft('Candidate gone');
    await ok(200, 'PUT', `/policy/${baseId}/shadow`, { recordId: draftId, sampleRate: 1 });
    // The candidate's record entry becomes the tombstone a deleted record leaves.
    const redis = new Redis(SHARED_SERVERS.redis);
    try {
      const recordKey = `${stack.env.NATS_SUBJECT_PREFIX}:runnable:policy:record:${draftId}`;
      const entry = JSON.parse((await redis.get(recordKey))!) as { rev: number; orgId: string };
      await redis.set(recordKey, JSON.stringify({ state: 'deleted', rev: entry.rev, orgId: entry.orgId, baseId, recordId: draftId }));
    } finally {
      redis.disconnect();
    }
    const metric = async () => {
      const text = await (await fetch(`${stack.opsUrl('execution')}/metrics`)).text();
      return Number(/arbiter_shadow_runs_total\{outcome="candidate_gone"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await metric();
    const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: { applicant: { score: 620 } } });
    expect(run.status).toBe(200);
    expect(run.body.result).toBe(true);
    await until(async () => ((await metric()) > before ? true : undefined), 'the candidate noted as gone');
    const report = await ok(200, 'GET', `/policy/${baseId}/shadow`);
    expect(report).toMatchObject({ sampled: 0, compared: 0, changed: 0, dropped: 0 });
  });

  it('lists the routes in /openapi.json', async () => {
    const doc = (await call(stack, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    for (const kind of ['policy', 'flow']) {
      expect(Object.keys(doc.paths[`/${kind}/{baseId}/shadow`] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    }
  });
});
