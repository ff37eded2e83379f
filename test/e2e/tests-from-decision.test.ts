/**
 * Saved tests from recorded decisions end to end (docs/decisions.md#saved-tests-from-decisions):
 * the built services (execution, registry, audit, gateway). A stored run is recorded, then
 * `POST /policy/{id}/tests/from-decision` saves its masked input and its answer as a test of the
 * base's draft (made from the latest version when there is none), which then passes at publish.
 */
import { randomUUID } from 'node:crypto';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from './harness.js';

let stack: Stack;
const key: Record<'admin' | 'auditor' | 'editor' | 'orgB', string> = { admin: '', auditor: '', editor: '', orgB: '' };

const RULE = 'An **applicant** is approved if the __score__ of the **applicant** is at least 600.';
const OTHER = 'A **parcel** ships today if the __weight__ of the **parcel** is no more than 30.';

/** Creates and publishes a policy; answers its base id. */
async function published(name: string, rule: string): Promise<string> {
  const created = await call(stack, 'POST', '/policy', { key: key.admin, body: { name, rule } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const out = await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: key.admin, body: { status: 'published' } });
  expect(out.status, JSON.stringify(out.body)).toBe(201);
  return created.body.baseId as string;
}

/** Waits for `count` recorded decisions of the base; answers them newest first. */
function decisionsOf(baseId: string, count: number): Promise<Array<Record<string, unknown>>> {
  return eventually(
    async () => {
      const res = await call(stack, 'GET', `/decisions?baseId=${baseId}`, { key: key.admin });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      if (res.body.items.length < count) throw new Error(`${res.body.items.length} of ${count} decisions recorded`);
      return res.body.items as Array<Record<string, unknown>>;
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
}

/** `k` null: no credentials. */
const fromDecision = (kind: string, id: string, body: unknown, k: string | null = key.admin) =>
  call(stack, 'POST', `/${kind}/${id}/tests/from-decision`, { ...(k !== null && { key: k }), body });

let base = '';
let other = '';
const decision = { approved: '', masked: '', failed: '', ofOther: '' };

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'gateway'],
    env: { EVENTS_FLUSH_MS: '200', DECISIONS_FLUSH_MS: '50', DECISIONS_SETTINGS_TTL_MS: '200' },
  });
  key.admin = stack.adminKey;
  key.auditor = await memberKey(stack, 'audrey', 'auditor', ['view', 'audit']);
  key.editor = await memberKey(stack, 'eddie', 'editor', ['view', 'edit']);
  const created = stack.admin(['create-org', 'globex', '--admin', 'gus']);
  expect(created.status, created.stderr).toBe(0);
  key.orgB = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;

  expect((await call(stack, 'PUT', '/decisions/settings', { key: key.admin, body: { masks: ['applicant.ssn'] } })).status).toBe(200);
  base = await published('Approval', RULE);
  other = await published('Parcels', OTHER);
  const run = async (id: string, data: unknown) =>
    expect((await call(stack, 'POST', `/run/policy/${id}`, { key: key.admin, body: data })).status).toBe(200);
  await run(base, { applicant: { score: 700 } });
  const [approved] = await decisionsOf(base, 1);
  await run(base, { applicant: { score: 500, ssn: '078-05-1120' } });
  const [masked] = await decisionsOf(base, 2);
  await run(base, { applicant: {} });
  const [failed] = await decisionsOf(base, 3);
  await run(other, { parcel: { weight: 3 } });
  const [ofOther] = await decisionsOf(other, 1);
  expect([approved.masked, masked.masked, failed.errorCode]).toEqual([false, true, 'missing_property']);
  Object.assign(decision, {
    approved: approved.decisionId,
    masked: masked.decisionId,
    failed: failed.decisionId,
    ofOther: ofOther.decisionId,
  });
}, 120_000);
afterAll(async () => stack?.stop());

describe('tests from decisions', () => {
  it('saves a decision as a test of a new draft made from the latest version, then a masked one saying so; the draft publishes', async () => {
    const first = await fromDecision('policy', base, { decisionId: decision.approved, name: 'approved at 700' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ baseId: base, status: 'draft', basedOnVersion: 1, rule: RULE });
    expect(first.body.tests).toEqual([{ name: 'approved at 700', data: { applicant: { score: 700 } }, expect: true }]);

    const second = await fromDecision('policy', base, { decisionId: decision.masked, name: 'declined at 500' });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect(second.body.policyId).toBe(first.body.policyId);
    expect(second.body.tests).toEqual([
      { name: 'approved at 700', data: { applicant: { score: 700 } }, expect: true },
      { name: 'declined at 500 (masked input)', data: { applicant: { score: 500, ssn: '***' } }, expect: false },
    ]);
    const draft = await call(stack, 'GET', `/policy/${base}/draft`, { key: key.admin });
    expect([draft.status, draft.body.tests]).toEqual([200, second.body.tests]);

    const publish = await call(stack, 'PUT', `/policy/${first.body.policyId}`, { key: key.admin, body: { status: 'published' } });
    expect([publish.status, publish.body.version]).toEqual([201, 2]);
  });

  it('refuses a decision of another base, and one that ended in an error, with a clear reason', async () => {
    const wrong = await fromDecision('policy', base, { decisionId: decision.ofOther, name: 'x' });
    expect([wrong.status, wrong.body.code, wrong.body.errors?.[0]?.code]).toEqual([400, 'validation_failed', 'decision_of_other_base']);
    const failed = await fromDecision('policy', base, { decisionId: decision.failed, name: 'x' });
    expect([failed.status, failed.body.code, failed.body.errors?.[0]?.code]).toEqual([400, 'validation_failed', 'decision_error']);
    // A policy base is no flow: 404 on the flow route.
    expect((await fromDecision('flow', base, { decisionId: decision.approved, name: 'x' })).status).toBe(404);
  });

  it('needs credentials, and both the edit right and the right to read decisions', async () => {
    const body = { decisionId: decision.approved, name: 'x' };
    expect((await fromDecision('policy', base, body, null)).status).toBe(401);
    expect((await fromDecision('policy', base, body, key.editor)).status).toBe(403);
    expect((await fromDecision('policy', base, body, key.auditor)).status).toBe(403);
  });

  it("answers 404 for another org's base, an unknown base or decision, and a deleted base", async () => {
    expect((await fromDecision('policy', base, { decisionId: decision.approved, name: 'x' }, key.orgB)).status).toBe(404);
    expect((await fromDecision('policy', randomUUID(), { decisionId: decision.approved, name: 'x' })).status).toBe(404);
    expect((await fromDecision('policy', base, { decisionId: randomUUID(), name: 'x' })).status).toBe(404);
    expect((await call(stack, 'DELETE', `/policy/${other}`, { key: key.admin })).status).toBe(204);
    expect((await fromDecision('policy', other, { decisionId: decision.ofOther, name: 'x' })).status).toBe(404);
  });

  it('refuses a malformed body with 400', async () => {
    for (const body of [
      { decisionId: 'nope', name: 'x' },
      { decisionId: decision.approved },
      { decisionId: decision.approved, name: ' ' },
      {},
    ]) {
      const res = await fromDecision('policy', base, body);
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([400, 'validation_failed']);
    }
  });
});
