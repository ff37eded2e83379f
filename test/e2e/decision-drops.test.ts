/**
 * Dropped decision records are never silent: with a small outbox limit
 * (`DECISIONS_OUTBOX_MAX`), a batch's records past it are dropped, the runs still answered, and
 * every record is accounted for: stored, or counted in `arbiter_decisions_dropped_total` and in
 * the base's stats (`GET /decisions/stats/{baseId}`).
 */
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from './harness.js';

let stack: Stack;
const RULE = 'An **applicant** is approved if the __score__ of the **applicant** is at least 600.';
const OUTBOX_MAX = 10;

/** A counter of the execution service's /metrics (0 when absent). */
async function execCounter(name: string, reason?: string): Promise<number> {
  const text = await (await fetch(`${stack.opsUrl('execution')}/metrics`)).text();
  const labels = reason === undefined ? 'service="execution"' : `reason="${reason}",service="execution"`;
  const m = new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(text);
  return m === null ? 0 : Number(m[1]);
}

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'gateway'],
    env: { DECISIONS_OUTBOX_MAX: String(OUTBOX_MAX), DECISIONS_PER_SECOND: '100000', DECISIONS_FLUSH_MS: '200' },
  });
}, 120_000);
afterAll(async () => stack?.stop());

describe('dropped decision records', () => {
  it("counts the records a full outbox dropped in the metric and in the base's stats: stored + dropped = runs", async () => {
    const key = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', { key, body: { name: 'Drops', rule: RULE } });
    expect(created.status).toBe(201);
    const { baseId, policyId } = created.body as { baseId: string; policyId: string };
    expect((await call(stack, 'PUT', `/policy/${policyId}`, { key, body: { status: 'published' } })).status).toBe(201);
    const stats = async () => {
      const res = await call(stack, 'GET', `/decisions/stats/${baseId}`, { key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { baseId: string; recorded: number; dropped: Record<string, number>; lastDroppedAt: string | null };
    };
    expect(await stats()).toEqual({
      baseId,
      recorded: 0,
      dropped: { total: 0, outbox: 0, buffer: 0, settings: 0, tooLarge: 0 },
      lastDroppedAt: null,
    });

    // One run first, so the org's settings are loaded before the batch (records wait for them).
    expect((await call(stack, 'POST', `/run/policy/${baseId}`, { key, body: { applicant: { score: 700 } } })).status).toBe(200);
    await eventually(async () => expect((await stats()).recorded).toBe(1), { timeoutMs: 20_000, intervalMs: 100 });

    // 200 records built in one flush, with room in the outbox for at most 10 of them.
    const items = Array.from({ length: 200 }, (_, i) => ({ applicant: { score: 500 + i } }));
    const run = await call(stack, 'POST', `/run/policy/${baseId}/batch`, { key, body: { items } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.results).toHaveLength(200);

    const runs = 1 + items.length;
    const settled = await eventually(
      async () => {
        const s = await stats();
        expect(s.recorded + s.dropped.total).toBe(runs);
        return s;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(settled.dropped.outbox).toBeGreaterThanOrEqual(items.length - OUTBOX_MAX);
    expect(settled.dropped).toMatchObject({ total: settled.dropped.outbox, buffer: 0, settings: 0, tooLarge: 0 });
    expect(settled.lastDroppedAt).not.toBeNull();
    // The metric counts the same drops, and the records written are those stored.
    expect(await execCounter('arbiter_decisions_dropped_total', 'outbox')).toBe(settled.dropped.outbox);
    expect(await execCounter('arbiter_decisions_recorded_total')).toBe(settled.recorded);
    const listed = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=200`, { key });
    expect(listed.body.items).toHaveLength(settled.recorded);
  });

  it('lets admins, auditors and publishers read the stats, not editors; another org sees none of them', async () => {
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'Stats access', rule: RULE } });
    const baseId = created.body.baseId as string;
    const auditor = await memberKey(stack, 'audrey', 'auditor', ['view', 'audit']);
    const publisher = await memberKey(stack, 'pia', 'publisher', ['view', 'edit', 'publish']);
    const editor = await memberKey(stack, 'eddie', 'editor', ['view', 'edit']);
    for (const key of [stack.adminKey, auditor, publisher]) {
      expect((await call(stack, 'GET', `/decisions/stats/${baseId}`, { key })).status).toBe(200);
    }
    expect((await call(stack, 'GET', `/decisions/stats/${baseId}`, { key: editor })).status).toBe(403);
    expect((await call(stack, 'GET', `/decisions/stats/${baseId}`, {})).status).toBe(401);
    const globex = stack.admin(['create-org', 'globex', '--admin', 'gus']);
    expect(globex.status, globex.stderr).toBe(0);
    const orgBKey = /\n\s+(\S+)\s*$/.exec(globex.stdout)![1]!;
    const other = await call(stack, 'GET', `/decisions/stats/${baseId}`, { key: orgBKey });
    expect(other.body).toMatchObject({ recorded: 0, dropped: { total: 0 } });
  });
});
