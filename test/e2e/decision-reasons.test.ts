/**
 * Reasons in decision records end to end (docs/decisions.md#reasons): the built services
 * (execution, registry, audit, governance, gateway). A stored run that asks for reasons is recorded
 * with them, masked like its input (the entry's value and the sentence); a run that does not ask
 * is recorded without; only the readers of decisions read them; impact analysis examples say why
 * each decision came out before (as recorded) and after (from the replay).
 */
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from './harness.js';

let stack: Stack;
const key = { admin: '', auditor: '', editor: '', viewer: '', orgB: '' };

const SSN = '078-05-1120';
const rule = (threshold: number) =>
  `An **applicant** is approved if the __score__ of the **applicant** is at least ${threshold} and the __ssn__ of the **applicant** is "123-45-6789".`;

async function ok(status: number, method: string, url: string, body?: unknown, k = key.admin): Promise<any> {
  const res = await call(stack, method, url, { key: k, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** Waits for `count` recorded decisions of the base; answers them newest first. */
function decisionsOf(baseId: string, count: number): Promise<any[]> {
  return eventually(
    async () => {
      const res = await call(stack, 'GET', `/decisions?baseId=${baseId}`, { key: key.admin });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      if (res.body.items.length < count) throw new Error(`${res.body.items.length} of ${count} decisions recorded`);
      return res.body.items as any[];
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
}

let policy = { baseId: '', policyId: '' };
let asked: any;
let notAsked: any;
let flowRecord: any;

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'governance', 'gateway'],
    env: { EVENTS_FLUSH_MS: '200', DECISIONS_FLUSH_MS: '50', DECISIONS_SETTINGS_TTL_MS: '200' },
  });
  key.admin = stack.adminKey;
  key.auditor = await memberKey(stack, 'audrey', 'auditor', ['view', 'audit']);
  key.editor = await memberKey(stack, 'eddie', 'editor', ['view', 'edit']);
  key.viewer = await memberKey(stack, 'vic', 'viewer', ['view']);
  const created = stack.admin(['create-org', 'globex', '--admin', 'gus']);
  expect(created.status, created.stderr).toBe(0);
  key.orgB = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
  // Masks first: the org's settings are read at its first run.
  await ok(200, 'PUT', '/decisions/settings', { masks: ['applicant.ssn'] });

  const p = await ok(201, 'POST', '/policy', { name: 'Approval', rule: rule(600) });
  await ok(201, 'PUT', `/policy/${p.policyId}`, { status: 'published' });
  policy = { baseId: p.baseId, policyId: p.policyId };
  const data = { applicant: { score: 500, ssn: SSN } };
  const answered = await ok(200, 'POST', `/run/policy/${policy.baseId}?reasons=true`, data);
  // The caller sees its own data in its answer.
  expect(answered.reasons.sentence).toContain(SSN);
  [asked] = await decisionsOf(policy.baseId, 1);
  await ok(200, 'POST', `/run/policy/${policy.baseId}`, { applicant: { score: 400, ssn: SSN } });
  [notAsked] = await decisionsOf(policy.baseId, 2);

  const flow = await ok(201, 'POST', '/flow', {
    name: 'Approval flow',
    definition: {
      start: 'check',
      nodes: {
        check: { type: 'policy', policyId: policy.policyId, onTrue: 'yes', onFalse: 'no' },
        yes: { type: 'return', value: true },
        no: { type: 'custom', outcome: 'manual review' },
      },
    },
  });
  await ok(201, 'PUT', `/flow/${flow.flowId}`, { status: 'published' });
  await ok(200, 'POST', `/run/flow/${flow.baseId}?reasons=true`, data);
  [flowRecord] = await decisionsOf(flow.baseId, 1);
}, 180_000);
afterAll(async () => stack?.stop());

describe('reasons in decision records', () => {
  it('are recorded for a run that asked for them, masked in each entry and in the sentence', async () => {
    const one = await ok(200, 'GET', `/decisions/${asked.decisionId}`, undefined, key.auditor);
    expect(one.masked).toBe(true);
    expect(one.input).toEqual({ applicant: { score: 500, ssn: '***' } });
    expect(JSON.stringify(one)).not.toContain(SSN);
    expect(one.reasons.result).toBe(false);
    expect(one.reasons.because.map((e: any) => [e.path, e.value])).toEqual([
      ['applicant.score', 500],
      ['applicant.ssn', '***'],
    ]);
    expect(one.reasons.sentence).toBe(
      'approved is false because the score of the applicant (500) is not at least 600 and the ssn of the applicant ("***") is not "123-45-6789"',
    );
  });

  it('are not recorded for a run that did not ask (recording never asks for them)', async () => {
    const one = await ok(200, 'GET', `/decisions/${notAsked.decisionId}`, undefined, key.auditor);
    expect(one).not.toHaveProperty('reasons');
    expect(one).not.toHaveProperty('reasonsLeftOut');
  });

  it("keep a flow's node reasons, masked", async () => {
    expect(flowRecord.result).toBe('manual review');
    expect(flowRecord.nodeReasons).toHaveLength(1);
    expect(flowRecord.nodeReasons[0].nodeId).toBe('check');
    expect(flowRecord.nodeReasons[0].reasons.sentence).toContain('("***")');
    expect(JSON.stringify(flowRecord)).not.toContain(SSN);
  });

  it('have the readers of decisions: 401 without credentials, 403 without the audit right, 404 for another org', async () => {
    const url = `/decisions/${asked.decisionId}`;
    expect((await call(stack, 'GET', url)).status).toBe(401);
    for (const k of [key.editor, key.viewer]) {
      const res = await call(stack, 'GET', url, { key: k });
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain('because');
    }
    expect((await call(stack, 'GET', url, { key: key.orgB })).status).toBe(404);
    expect((await call(stack, 'GET', '/decisions/not-a-uuid', { key: key.admin })).status).toBe(400);
    // The list answers the same readers.
    expect((await call(stack, 'GET', `/decisions?baseId=${policy.baseId}`, { key: key.editor })).status).toBe(403);
  });
});

describe('impact analysis examples', () => {
  it('say why each decision came out before (as recorded) and after (the replay), for readers of decisions only', async () => {
    const draft = await ok(201, 'GET', `/policy/${policy.policyId}/draft`);
    // A draft that reads the masked ssn replays neither decision: unreplayable, no examples.
    await ok(200, 'PUT', `/policy/${draft.policyId}`, { status: 'draft', rule: rule(450) });
    const report = await ok(200, 'POST', `/policy/${draft.policyId}/impact`, { limit: 10 });
    expect(report.replayed).toBe(2);
    expect(report.unreplayable).toBe(2);
    expect(report.examples).toEqual([]);
    // A draft that only asks for a lower score changes the decision at 500 (400 stays false).

    await ok(200, 'PUT', `/policy/${draft.policyId}`, {
      status: 'draft',
      rule: 'An **applicant** is approved if the __score__ of the **applicant** is at least 450.',
    });
    // A run that did not ask for reasons and met missing data: recorded without reasons.
    await ok(200, 'POST', `/run/policy/${policy.baseId}`, { applicant: { score: 460 } });
    const [missing] = await decisionsOf(policy.baseId, 3);
    expect([missing.errorCode, missing.reasons]).toEqual(['missing_property', undefined]);
    const changed = await ok(200, 'POST', `/policy/${draft.policyId}/impact`, { limit: 10 });
    expect(changed).toMatchObject({ replayed: 3, changed: 2, transitions: { 'false→true': 1, 'error→true': 1 } });
    // Before, for the run that did not ask: replayed through the version that decided it (the same answer).
    const fromMissing = changed.examples.find((e: any) => e.decisionId === missing.decisionId);
    expect(fromMissing.before).toMatchObject({ errorCode: 'missing_property', reasonsReplayed: true });
    expect(fromMissing.before.reasons.because[0]).toMatchObject({ kind: 'missing', path: 'applicant.ssn' });
    expect(fromMissing.after.reasons.sentence).toBe('approved is true because the score of the applicant (460) is at least 450');
    const example = changed.examples.find((e: any) => e.decisionId === asked.decisionId);
    expect(example.before).not.toHaveProperty('reasonsReplayed');
    expect(example.before.reasons.sentence).toBe(
      'approved is false because the score of the applicant (500) is not at least 600 and the ssn of the applicant ("***") is not "123-45-6789"',
    );
    expect(example.after.reasons).toMatchObject({
      result: true,
      sentence: 'approved is true because the score of the applicant (500) is at least 450',
    });
    expect(JSON.stringify(changed)).not.toContain(SSN);

    const forEditor = await ok(200, 'POST', `/policy/${draft.policyId}/impact`, { limit: 10 }, key.editor);
    expect(forEditor).not.toHaveProperty('examples');
    const review = await ok(200, 'GET', `/policy/${draft.policyId}/review`, undefined, key.auditor);
    expect(review.impact.examples[0].after.reasons.result).toBe(true);
  });
});
