/**
 * A decision record too large for the bus, through the public API: `POST /run` with a body of about
 * 1 MB of `9e20`s (within the body limit) makes a record of about 4.4 MB once its numbers are
 * written again (`900000000000000000000`), more than NATS takes. The run is answered; the record is
 * dropped as `too_large` before the outbox, counted in the metric and in the base's stats, and
 * nothing of it stays in Redis; the next records are stored as before.
 */
import { eventually, testServers } from '@arbiter/test-kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let redis: Redis;
const RULE = 'An **applicant** is approved if the __score__ of the **applicant** is at least 600.';

/** A counter of the execution service's /metrics (0 when absent). */
async function execCounter(name: string, reason?: string): Promise<number> {
  const text = await (await fetch(`${stack.opsUrl('execution')}/metrics`)).text();
  const labels = reason === undefined ? 'service="execution"' : `reason="${reason}",service="execution"`;
  const m = new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(text);
  return m === null ? 0 : Number(m[1]);
}

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'audit', 'gateway'] });
  redis = new Redis(testServers().redis);
}, 120_000);
afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
});

describe('a run whose decision record is larger than the bus takes', () => {
  it('is answered; its record is dropped as too_large, counted in the metric and the stats, and leaves nothing in Redis', async () => {
    const key = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', { key, body: { name: 'Big records', rule: RULE } });
    expect(created.status).toBe(201);
    const { baseId, policyId } = created.body as { baseId: string; policyId: string };
    expect((await call(stack, 'PUT', `/policy/${policyId}`, { key, body: { status: 'published' } })).status).toBe(201);
    const stats = async () => {
      const res = await call(stack, 'GET', `/decisions/stats/${baseId}`, { key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { recorded: number; dropped: Record<string, number> };
    };
    // One run first, so the org's settings are loaded (records wait for them).
    expect((await call(stack, 'POST', `/run/policy/${baseId}`, { key, body: { applicant: { score: 700 } } })).status).toBe(200);
    await eventually(async () => expect((await stats()).recorded).toBe(1), { timeoutMs: 20_000, intervalMs: 100 });

    // About 1,000,000 bytes as sent (the body limit is 1 MiB); about 4.4 MB once written again.
    const rawBody = `{"applicant":{"score":700},"x":[${Array.from({ length: 199_990 }, () => '9e20').join(',')}]}`;
    expect(rawBody.length).toBeGreaterThan(990_000);
    expect(rawBody.length).toBeLessThan(1024 * 1024);
    const big = await call(stack, 'POST', `/run/policy/${baseId}`, { key, rawBody });
    expect(big.status, JSON.stringify(big.body).slice(0, 500)).toBe(200);
    expect(big.body).toMatchObject({ result: true });

    await eventually(async () => expect((await stats()).dropped).toMatchObject({ total: 1, tooLarge: 1 }), {
      timeoutMs: 20_000,
      intervalMs: 200,
    });
    expect(await execCounter('arbiter_decisions_dropped_total', 'too_large')).toBe(1);
    // Nothing of it in the outbox: it empties, and no memory is held for it there.
    const outbox = `${stack.env.NATS_SUBJECT_PREFIX}:outbox:execution`;
    await eventually(async () => expect(await redis.xlen(outbox)).toBe(0), { timeoutMs: 20_000, intervalMs: 200 });
    expect((await redis.xpending(outbox, 'relay'))[0]).toBe(0);

    // Later records are stored as before.
    expect((await call(stack, 'POST', `/run/policy/${baseId}`, { key, body: { applicant: { score: 500 } } })).status).toBe(200);
    await eventually(async () => expect((await stats()).recorded).toBe(2), { timeoutMs: 20_000, intervalMs: 100 });
    expect((await stats()).dropped).toMatchObject({ total: 1, tooLarge: 1, outbox: 0, buffer: 0, settings: 0 });
  }, 120_000);
});
