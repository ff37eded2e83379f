/**
 * Impact analysis end to end: a seeded decision history replayed through a draft that
 * moves a threshold changes exactly the decisions between the old and the new threshold; decisions
 * whose replay reads a masked value are unreplayable; the draft's review summary carries the
 * report until the draft is edited.
 */
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey as sharedMemberKey, startStack, type Stack } from './harness.js';

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

const memberKey = (userId: string, role: string, scopes: string[]): Promise<string> => sharedMemberKey(stack, userId, role, scopes);

/** A published policy with `threshold`, its runs on `items` recorded, and a draft of it. */
async function seeded(threshold: number, items: unknown[], masks: string[] = []) {
  const key = stack.adminKey;
  const created = await call(stack, 'POST', '/policy', { key, body: { name: `p${threshold}`, rule: rule(threshold) } });
  expect(created.status).toBe(201);
  const { baseId, policyId } = created.body as { baseId: string; policyId: string };
  expect((await call(stack, 'PUT', `/policy/${policyId}`, { key, body: { status: 'published' } })).status).toBe(201);
  const count = async (): Promise<{ n: number; newest: any }> => {
    const res = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=200`, { key });
    let n = res.body.items.length as number;
    let cursor = res.body.nextCursor as string | null;
    while (cursor !== null) {
      const next = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=200&cursor=${encodeURIComponent(cursor)}`, { key });
      n += next.body.items.length as number;
      cursor = next.body.nextCursor as string | null;
    }
    return { n, newest: res.body.items[0] };
  };
  let probes = 0;
  if (masks.length > 0) {
    expect((await call(stack, 'PUT', `/decisions/settings/${baseId}`, { key, body: { masks } })).status).toBe(200);
    // Settings reach the execution service within DECISIONS_SETTINGS_TTL_MS: probe (a run without a
    // score, whose `note` is masked once they have) until a recorded probe shows them.
    for (;;) {
      expect((await call(stack, 'POST', `/run/policy/${baseId}`, { key, body: { note: 'probe' } })).status).toBe(200);
      probes++;
      const { newest } = await until(async () => {
        const c = await count();
        return c.n === probes ? c : undefined;
      }, 'the probe recorded');
      if (newest.input.note === '***') break;
    }
  }
  const run = await call(stack, 'POST', `/run/policy/${baseId}/batch`, { key, body: { items } });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  await until(async () => ((await count()).n === items.length + probes ? true : undefined), `${items.length} decisions`);
  const draft = await call(stack, 'GET', `/policy/${policyId}/draft`, { key });
  expect(draft.status, JSON.stringify(draft.body)).toBe(201);
  return { baseId, policyId, draftId: draft.body.policyId as string, probes };
}

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'governance', 'gateway'],
    env: { DECISIONS_FLUSH_MS: '50', DECISIONS_PER_SECOND: '100000', DECISIONS_SETTINGS_TTL_MS: '200' },
  });
}, 120_000);
afterAll(async () => stack?.stop());

describe('impact analysis', () => {
  it('counts exactly the decisions between the old and the new threshold as changed, and keeps the report for the draft', async () => {
    const key = stack.adminKey;
    // Scores 500..799: 300 decisions, 100 of them in [600, 700).
    const items = Array.from({ length: 300 }, (_, i) => ({ applicant: { score: 500 + i } }));
    const { draftId } = await seeded(600, items);
    expect((await call(stack, 'PUT', `/policy/${draftId}`, { key, body: { status: 'draft', rule: rule(700) } })).status).toBe(200);
    const res = await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: { limit: 1000 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      policyId: draftId,
      replayed: 300,
      changed: 100,
      unchanged: 200,
      errors: 0,
      unreplayable: 0,
      transitions: { 'true→false': 100 },
    });
    expect(res.body.examples).toHaveLength(20);
    for (const ex of res.body.examples) {
      expect(ex.input.applicant.score).toBeGreaterThanOrEqual(600);
      expect(ex.input.applicant.score).toBeLessThan(700);
      expect(ex).toMatchObject({ before: { result: true }, after: { result: false } });
    }
    // `limit` takes the most recent decisions only.
    expect((await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: { limit: 10 } })).body.replayed).toBe(10);
    const again = await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: {} });
    const review = await call(stack, 'GET', `/policy/${draftId}/review`, { key });
    expect(review.status, JSON.stringify(review.body)).toBe(200);
    expect(review.body.impact).toMatchObject({ impactId: again.body.impactId, changed: 100 });
    // An edit changes the content hash: the report is stale and no longer shown.
    expect((await call(stack, 'PUT', `/policy/${draftId}`, { key, body: { status: 'draft', rule: rule(650) } })).status).toBe(200);
    expect((await call(stack, 'GET', `/policy/${draftId}/review`, { key })).body.impact).toBeNull();
    expect((await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: {} })).body).toMatchObject({ changed: 50 });
  });

  it("replays a history of single runs, each at its own `now`, without refusing any (the replays stay within the caller's limits)", async () => {
    const key = stack.adminKey;
    const { baseId, draftId } = await seeded(600, [{ applicant: { score: 650 } }]);
    // Single runs one after another: their decisions have distinct `now`s, so each replays in a group of its own.
    for (let i = 0; i < 150; i++) {
      const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key, body: { applicant: { score: 550 + i } } });
      expect(run.status).toBe(200);
    }
    await until(async () => {
      const res = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=200`, { key });
      return res.body.items.length === 151 ? true : undefined;
    }, '151 decisions');
    expect((await call(stack, 'PUT', `/policy/${draftId}`, { key, body: { status: 'draft', rule: rule(650) } })).status).toBe(200);
    const res = await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Scores 600..649 move from true to false: 50 decisions.
    expect(res.body).toMatchObject({ replayed: 151, errors: 0, changed: 50, unchanged: 101, transitions: { 'true→false': 50 } });
  });

  it('counts decisions whose replay reads a masked value as unreplayable, never as unchanged', async () => {
    const key = stack.adminKey;
    const items = [
      ...Array.from({ length: 5 }, (_, i) => ({ applicant: { score: 600 + i, ssn: 'x' } })),
      ...Array.from({ length: 3 }, () => ({ applicant: { name: 'no score' } })),
      ...Array.from({ length: 4 }, () => ({ applicant: { score: 900 }, note: 'secret' })),
    ];
    const { draftId, probes } = await seeded(600, items, ['applicant.score', 'note']);
    const res = await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The 9 scored decisions read the masked score; the 3 without one (and the probes) replay, as
    // errors, unchanged; `note` is masked but never read, which alone does not make one unreplayable.
    const plain = 3 + probes;
    expect(res.body).toMatchObject({ replayed: 12 + probes, unreplayable: 9, unchanged: plain, changed: 0, errors: plain });
  });

  it('lets editors analyse drafts only, and answers 404 for another org and 400 for a bad body', async () => {
    const key = stack.adminKey;
    const { policyId, draftId } = await seeded(600, [{ applicant: { score: 1 } }]);
    const editorKey = await memberKey('eve', 'editor', ['view', 'edit']);
    const viewerKey = await memberKey('vic', 'viewer', ['view']);
    expect((await call(stack, 'POST', `/policy/${draftId}/impact`, { key: editorKey, body: {} })).status).toBe(200);
    expect((await call(stack, 'POST', `/policy/${policyId}/impact`, { key: editorKey, body: {} })).status).toBe(403);
    expect((await call(stack, 'POST', `/policy/${draftId}/impact`, { key: viewerKey, body: {} })).status).toBe(403);
    const globex = stack.admin(['create-org', 'globex', '--admin', 'gus']);
    expect(globex.status, globex.stderr).toBe(0);
    const orgBKey = /\n\s+(\S+)\s*$/.exec(globex.stdout)![1]!;
    expect((await call(stack, 'POST', `/policy/${draftId}/impact`, { key: orgBKey, body: {} })).status).toBe(404);
    expect((await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: { limit: 10_001 } })).status).toBe(400);
    expect((await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: { nope: 1 } })).status).toBe(400);
    expect((await call(stack, 'POST', `/policy/00000000-0000-7000-8000-000000000000/impact`, { key, body: {} })).status).toBe(404);
    expect((await call(stack, 'POST', `/policy/${draftId}/impact`, { body: {} })).status).toBe(401);
  });

  it('shows the examples (recorded inputs) only to callers with the `audit` right; the counts to everyone', async () => {
    const key = stack.adminKey;
    const items = Array.from({ length: 6 }, (_, i) => ({
      applicant: { score: 640 + i, name: `Erika ${i}`, iban: `DE8937040044053201300${i}` },
    }));
    const { draftId } = await seeded(600, items);
    expect((await call(stack, 'PUT', `/policy/${draftId}`, { key, body: { status: 'draft', rule: rule(643) } })).status).toBe(200);
    const counts = { replayed: 6, changed: 3, unchanged: 3, transitions: { 'true→false': 3 } };
    const keys = {
      admin: key,
      auditor: await memberKey('audra', 'auditor', ['view', 'audit']),
      viewer: await memberKey('vance', 'viewer', ['view']),
      editor: await memberKey('edna', 'editor', ['view', 'edit']),
      publisher: await memberKey('paula', 'publisher', ['view', 'edit', 'publish']),
      adminViewKey: await memberKey('adele', 'admin', ['view', 'edit', 'publish', 'admin']),
    };
    // The analysis answer: an editor's and a publisher's have no examples (neither may read decisions).
    for (const who of ['editor', 'publisher', 'adminViewKey'] as const) {
      const res = await call(stack, 'POST', `/policy/${draftId}/impact`, { key: keys[who], body: {} });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body, who).toMatchObject(counts);
      expect(res.body, who).not.toHaveProperty('examples');
      expect(JSON.stringify(res.body), who).not.toContain('DE89');
      expect((await call(stack, 'GET', '/decisions', { key: keys[who] })).status, who).toBe(403);
    }
    const analysed = await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: {} });
    expect(analysed.body).toMatchObject({ ...counts, examplesTruncated: false });
    expect(analysed.body.examples).toHaveLength(3);
    // The review summary carries the kept report: whole for an admin and an auditor, counts for the rest.
    for (const who of ['admin', 'auditor'] as const) {
      const review = await call(stack, 'GET', `/policy/${draftId}/review`, { key: keys[who] });
      expect(review.status, JSON.stringify(review.body)).toBe(200);
      expect(review.body.impact, who).toMatchObject({ ...counts, impactId: analysed.body.impactId });
      expect(review.body.impact.examples.map((ex: any) => ex.input.applicant.iban).sort(), who).toEqual([
        'DE89370400440532013000',
        'DE89370400440532013001',
        'DE89370400440532013002',
      ]);
    }
    for (const who of ['viewer', 'editor', 'publisher', 'adminViewKey'] as const) {
      const review = await call(stack, 'GET', `/policy/${draftId}/review`, { key: keys[who] });
      expect(review.status, JSON.stringify(review.body)).toBe(200);
      expect(review.body.impact, who).toMatchObject({ ...counts, impactId: analysed.body.impactId });
      expect(review.body.impact, who).not.toHaveProperty('examples');
      expect(JSON.stringify(review.body), who).not.toMatch(/DE89|Erika/);
    }
  });

  it('keeps the examples that fit when recorded inputs are large: the analysis and the review summary answer 200, never 422', async () => {
    const key = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', { key, body: { name: 'large inputs', rule: rule(600) } });
    expect(created.status).toBe(201);
    const { baseId, policyId } = created.body as { baseId: string; policyId: string };
    expect((await call(stack, 'PUT', `/policy/${policyId}`, { key, body: { status: 'published' } })).status).toBe(201);
    // 24 runs of ~100 KB each: their 20 examples would be ~2 MB, twice the bus limit.
    for (let i = 0; i < 24; i++) {
      const body = { applicant: { score: 650, notes: `${i}`.padEnd(100_000, 'n') } };
      const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key, body });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
    }
    await until(async () => {
      const stats = await call(stack, 'GET', `/decisions/stats/${baseId}`, { key });
      return stats.body.recorded === 24 ? true : undefined;
    }, '24 decisions');
    const draft = await call(stack, 'GET', `/policy/${policyId}/draft`, { key });
    expect(draft.status).toBe(201);
    const draftId = draft.body.policyId as string;
    expect((await call(stack, 'PUT', `/policy/${draftId}`, { key, body: { status: 'draft', rule: rule(700) } })).status).toBe(200);

    const res = await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: {} });
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
    expect(res.body).toMatchObject({ replayed: 24, changed: 24, examplesTruncated: true });
    expect(res.body.examples.length).toBeGreaterThan(0);
    expect(res.body.examples.length).toBeLessThan(20);
    for (const who of [key, await memberKey('vita', 'viewer', ['view'])]) {
      const review = await call(stack, 'GET', `/policy/${draftId}/review`, { key: who });
      expect(review.status, JSON.stringify(review.body).slice(0, 500)).toBe(200);
      expect(review.body.impact).toMatchObject({ impactId: res.body.impactId, replayed: 24, changed: 24 });
    }
  });

  it('answers 503 while the audit or the execution service is down, never a report of errors, and analyses again once back', async () => {
    const key = stack.adminKey;
    const { draftId } = await seeded(600, [{ applicant: { score: 650 } }, { applicant: { score: 550 } }]);
    for (const service of ['audit', 'execution'] as const) {
      await stack.stopService(service);
      try {
        const res = await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: {} });
        expect(res.status, `${service} down: ${JSON.stringify(res.body)}`).toBe(503);
        expect(res.body).toMatchObject({ code: 'dependency_unavailable' });
      } finally {
        await stack.startService(service);
      }
      const again = await until(async () => {
        const res = await call(stack, 'POST', `/policy/${draftId}/impact`, { key, body: {} });
        return res.status === 200 ? res : undefined;
      }, `an analysis after ${service} is back`);
      expect(again.body).toMatchObject({ replayed: 2, errors: 0 });
    }
  });
});
