/**
 * Impact analysis of flows end to end: `POST /flow/{flowId}/impact` replays the flow
 * base's recorded decisions through a flow record. A draft flow whose policy node moves a threshold
 * changes exactly the decisions between the old and the new one (their result and path); decisions
 * whose replay reads a masked value in a policy node or in a table cell are unreplayable; the flow
 * draft's review summary carries the report until the draft is edited; the access rules are the
 * policy analysis's.
 */
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from './harness.js';

let stack: Stack;

const rule = (threshold: number) => `An **applicant** is approved if the __score__ of the **applicant** is at least ${threshold}.`;

/** Polls `probe` (through test-kit's `eventually`) until it gives a value. */
function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 30_000): Promise<T> {
  return eventually(
    async () => {
      const got = await probe();
      if (got === undefined) throw new Error(`timed out waiting for ${what}`);
      return got;
    },
    { timeoutMs: ms, intervalMs: 100 },
  );
}

async function ok(status: number, method: string, url: string, body?: unknown, key = stack.adminKey): Promise<any> {
  const res = await call(stack, method, url, { key, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** A published policy with `threshold`, and its draft moved to `draftThreshold`. */
async function policyWithDraft(threshold: number, draftThreshold: number): Promise<{ baseId: string; policyId: string; draftId: string }> {
  const created = await ok(201, 'POST', '/policy', { name: `p${threshold}-${Math.random().toString(36).slice(2)}`, rule: rule(threshold) });
  await ok(201, 'PUT', `/policy/${created.policyId}`, { status: 'published' });
  const draft = await ok(201, 'GET', `/policy/${created.policyId}/draft`);
  await ok(200, 'PUT', `/policy/${draft.policyId}`, { status: 'draft', rule: rule(draftThreshold) });
  return { baseId: created.baseId, policyId: created.policyId, draftId: draft.policyId };
}

/** Approve on a policy node (`policyId` an exact record), else the custom outcome `manual review`. */
const approval = (policyId: string) => ({
  start: 'score',
  nodes: {
    score: { type: 'policy', policyId, onTrue: 'ok', onFalse: 'review' },
    ok: { type: 'return', value: true },
    review: { type: 'custom', outcome: 'manual review' },
  },
});

/** Decisions recorded for `baseId`, counted through every page of `GET /decisions`. */
async function recorded(baseId: string): Promise<{ n: number; newest: any }> {
  const key = stack.adminKey;
  const res = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=200`, { key });
  let n = res.body.items.length as number;
  let cursor = res.body.nextCursor as string | null;
  while (cursor !== null) {
    const next = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=200&cursor=${encodeURIComponent(cursor)}`, { key });
    n += next.body.items.length as number;
    cursor = next.body.nextCursor as string | null;
  }
  return { n, newest: res.body.items[0] };
}

/**
 * A published flow with `definition`, its runs on `items` recorded (in batches of 50), and a
 * draft of it. With `masks`, the base's masks are set first, and probes (`{note: "probe"}`, whose
 * `note` a mask must cover) run until a recorded one shows them applied.
 */
async function seededFlow(definition: unknown, items: unknown[], masks: string[] = []) {
  const created = await ok(201, 'POST', '/flow', { name: `f-${Math.random().toString(36).slice(2)}`, definition });
  const { baseId, flowId } = created as { baseId: string; flowId: string };
  await ok(201, 'PUT', `/flow/${flowId}`, { status: 'published' });
  let probes = 0;
  if (masks.length > 0) {
    await ok(200, 'PUT', `/decisions/settings/${baseId}`, { masks });
    for (;;) {
      await ok(200, 'POST', `/run/flow/${baseId}`, { note: 'probe' });
      probes++;
      const { newest } = await until(async () => {
        const c = await recorded(baseId);
        return c.n === probes ? c : undefined;
      }, 'the probe recorded');
      if (newest.input.note === '***') break;
    }
  }
  for (let i = 0; i < items.length; i += 50) {
    const run = await ok(200, 'POST', `/run/flow/${baseId}/batch`, { items: items.slice(i, i + 50) });
    expect(run.results.filter((r: any) => r.flowId !== flowId)).toEqual([]);
  }
  await until(async () => ((await recorded(baseId)).n === items.length + probes ? true : undefined), `${items.length} decisions`);
  const draft = await ok(201, 'GET', `/flow/${flowId}/draft`);
  return { baseId, flowId, draftId: draft.flowId as string, probes };
}

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'governance', 'gateway'],
    env: { DECISIONS_FLUSH_MS: '50', DECISIONS_PER_SECOND: '100000', DECISIONS_SETTINGS_TTL_MS: '200' },
  });
}, 120_000);
afterAll(async () => stack?.stop());

describe('flow impact analysis', () => {
  it('counts exactly the decisions between the old and the new threshold of its policy as changed, with their paths, and keeps the report for the draft', async () => {
    const policy = await policyWithDraft(600, 700);
    // Scores 500..799: 300 decisions, 100 of them in [600, 700).
    const items = Array.from({ length: 300 }, (_, i) => ({ applicant: { score: 500 + i } }));
    const { draftId } = await seededFlow(approval(policy.policyId), items);
    // The draft flow runs the policy's draft (700) instead of its version (600).
    await ok(200, 'PUT', `/flow/${draftId}`, { status: 'draft', definition: approval(policy.draftId) });
    const report = await ok(200, 'POST', `/flow/${draftId}/impact`, { limit: 1000 });
    expect(report).toMatchObject({
      flowId: draftId,
      replayed: 300,
      changed: 100,
      unchanged: 200,
      errors: 0,
      unreplayable: 0,
      transitions: { 'true→manual review': 100 },
      outcomes: {},
    });
    expect(report.policyId).toBeUndefined();
    expect(Object.values(report.transitions as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(100);
    expect(report.examples).toHaveLength(20);
    for (const ex of report.examples) {
      expect(ex.input.applicant.score).toBeGreaterThanOrEqual(600);
      expect(ex.input.applicant.score).toBeLessThan(700);
      expect(ex).toMatchObject({
        before: { result: true, errorCode: null, path: ['score', 'ok'] },
        after: { result: 'manual review', errorCode: null, path: ['score', 'review'] },
      });
    }
    // `limit` takes the most recent decisions only.
    expect((await ok(200, 'POST', `/flow/${draftId}/impact`, { limit: 10 })).replayed).toBe(10);

    const again = await ok(200, 'POST', `/flow/${draftId}/impact`, {});
    const review = await ok(200, 'GET', `/flow/${draftId}/review`);
    expect(review.impact).toMatchObject({ impactId: again.impactId, flowId: draftId, changed: 100 });
    // An edit of the flow draft changes its content hash: the report is stale and no longer shown.
    const moved = await policyWithDraft(600, 650);
    await ok(200, 'PUT', `/flow/${draftId}`, { status: 'draft', definition: approval(moved.draftId) });
    expect((await ok(200, 'GET', `/flow/${draftId}/review`)).impact).toBeNull();
    expect(await ok(200, 'POST', `/flow/${draftId}/impact`, {})).toMatchObject({ changed: 50, transitions: { 'true→manual review': 50 } });
    expect((await ok(200, 'GET', `/flow/${draftId}/review`)).impact).toMatchObject({ changed: 50 });
  });

  it('counts decisions whose replay reads a masked value, in a table node or a policy node, as unreplayable', async () => {
    const { policyId } = await policyWithDraft(600, 600);
    // `gold` applicants go to the `region` table (whose input, the country, is masked); the others
    // to the policy node (reading the masked score), their country never read.
    const definition = {
      start: 'lane',
      nodes: {
        lane: {
          type: 'table',
          hitPolicy: 'first',
          inputs: [{ name: 'tier', path: 'applicant.tier' }],
          outputs: [{ name: 'lane' }],
          rules: [
            { when: ['"gold"'], then: { lane: 'gold' } },
            { when: ['-'], then: { lane: 'basic' } },
          ],
          routeOn: 'lane',
          routes: { gold: 'region' },
          default: 'score',
        },
        region: {
          type: 'table',
          hitPolicy: 'first',
          inputs: [{ name: 'country', path: 'applicant.country' }],
          outputs: [{ name: 'region' }],
          rules: [
            { when: ['["NL", "BE"]'], then: { region: 'eu' } },
            { when: ['-'], then: { region: 'other' } },
          ],
        },
        score: { type: 'policy', policyId, onTrue: 'ok', onFalse: 'review' },
        ok: { type: 'return', value: true },
        review: { type: 'custom', outcome: 'manual review' },
      },
    };
    const items = [
      ...Array.from({ length: 3 }, () => ({ applicant: { tier: 'gold', country: 'NL' } })),
      ...Array.from({ length: 4 }, (_, i) => ({ applicant: { tier: 'basic', country: 'NL', score: 650 + i } })),
      ...Array.from({ length: 2 }, () => ({ applicant: { tier: 'basic', country: 'BE' } })),
    ];
    const { draftId, probes } = await seededFlow(definition, items, ['applicant.country', 'applicant.score', 'note']);
    const report = await ok(200, 'POST', `/flow/${draftId}/impact`, {});
    // 3 read the masked country in the `region` table, 4 the masked score in the policy node; the 2
    // without a score (and the probes, without a tier) replay as the errors they were, unchanged:
    // their masked country is never read, as the `region` table is not on their path.
    const plain = 2 + probes;
    expect(report).toMatchObject({ replayed: 9 + probes, unreplayable: 7, unchanged: plain, changed: 0, errors: plain });
  });

  it('lets editors analyse flow drafts only, and answers 404 for another org or an unknown id and 400 for a bad body', async () => {
    const { policyId } = await policyWithDraft(600, 600);
    const { flowId, draftId } = await seededFlow(approval(policyId), [{ applicant: { score: 1 } }]);
    const editorKey = await memberKey(stack, 'eve', 'editor', ['view', 'edit']);
    const viewerKey = await memberKey(stack, 'vic', 'viewer', ['view']);
    const publisherKey = await memberKey(stack, 'pia', 'publisher', ['view', 'edit', 'publish']);
    expect((await ok(200, 'POST', `/flow/${draftId}/impact`, {}, editorKey)).replayed).toBe(1);
    await ok(403, 'POST', `/flow/${flowId}/impact`, {}, editorKey);
    await ok(403, 'POST', `/flow/${draftId}/impact`, {}, viewerKey);
    expect((await ok(200, 'POST', `/flow/${flowId}/impact`, {}, publisherKey)).flowId).toBe(flowId);
    const globex = stack.admin(['create-org', 'globex', '--admin', 'gus']);
    expect(globex.status, globex.stderr).toBe(0);
    const orgBKey = /\n\s+(\S+)\s*$/.exec(globex.stdout)![1]!;
    await ok(404, 'POST', `/flow/${draftId}/impact`, {}, orgBKey);
    await ok(404, 'POST', '/flow/00000000-0000-7000-8000-000000000000/impact', {});
    // A flow's id is not a policy's, nor the other way round.
    await ok(404, 'POST', `/policy/${draftId}/impact`, {});
    await ok(404, 'POST', `/flow/${policyId}/impact`, {});
    await ok(400, 'POST', `/flow/${draftId}/impact`, { limit: 10_001 });
    await ok(400, 'POST', `/flow/${draftId}/impact`, { nope: 1 });
    await ok(400, 'POST', '/flow/not-a-uuid/impact', {});
    expect((await call(stack, 'POST', `/flow/${draftId}/impact`, { body: {} })).status).toBe(401);
  });

  it('documents the route in /openapi.json with the report naming the flow', async () => {
    const doc = (await call(stack, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    const op = doc.paths['/flow/{flowId}/impact']!.post;
    expect(op.tags).toEqual(['flows']);
    expect(Object.keys(op.responses['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining([
        'impactId',
        'policyId',
        'flowId',
        'contentHash',
        'replayed',
        'unchanged',
        'changed',
        'errors',
        'unreplayable',
      ]),
    );
  });
});
