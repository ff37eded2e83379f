/**
 * End-to-end: a runaway rule cannot starve other callers (issue 13 defect 1). Gateway → NATS →
 * execution with ONE worker thread, as on a 2-core machine: the step budget stops the runaway rule
 * with `budget_exceeded` (200), and the per-caller queue serves other keys in turn.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let attacker: string;
let victim: string;

const RUNAWAY = 'if any of o.items satisfies (any of o.items satisfies (its.p == 5)) -> ok.';
const runawayBody = () => ({ rule: RUNAWAY, data: { o: { items: Array.from({ length: 30_000 }, () => ({ p: 1 })) } } });
const ORDINARY = { rule: 'A **user** is adult if the __age__ of the **user** is at least 18.', data: { user: { age: 30 } } };

async function viewKey(name: string): Promise<string> {
  const res = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name, scopes: ['view'] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key as string;
}

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'gateway'], env: { EXEC_POOL_SIZE: '1', EXEC_CALLER_MAX: '4' } });
  attacker = await viewKey('attacker');
  victim = await viewKey('victim');
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('a runaway rule', () => {
  it('answers 200 budget_exceeded, and the next ordinary runs succeed (the issue reproduction)', async () => {
    const runaway = await call(stack, 'POST', '/run', { key: attacker, body: runawayBody() });
    expect(runaway.status, JSON.stringify(runaway.body).slice(0, 300)).toBe(200);
    expect(runaway.body).toMatchObject({
      result: false,
      errorCode: 'budget_exceeded',
      error: 'Budget exceeded: the evaluation needs more than 10000 steps',
    });
    // `/run` always traces: the traced budget (EXEC_TRACE_STEP_BUDGET) applies.
    expect(runaway.body.trace.at(-1)).toBe(`error: ${runaway.body.error}`);
    for (let i = 0; i < 3; i++) {
      const ordinary = await call(stack, 'POST', '/run', { key: victim, body: ORDINARY });
      expect(ordinary.status).toBe(200);
      expect(ordinary.body.result).toBe(true);
    }
  });

  it("does not starve another key: while one key sends runaway rules back to back, the other's runs all succeed", async () => {
    let attacking = true;
    const attackerStatuses: number[] = [];
    // Back to back: the next runaway request as soon as the previous one is answered.
    const attack = Promise.all(
      [1].map(async () => {
        while (attacking) {
          const res = await call(stack, 'POST', '/run', { key: attacker, body: runawayBody() });
          attackerStatuses.push(res.status);
        }
      }),
    );
    const latencies: number[] = [];
    try {
      for (let i = 0; i < 40; i++) {
        const started = performance.now();
        const res = await call(stack, 'POST', '/run', { key: victim, body: { ...ORDINARY, data: { user: { age: i } } } });
        latencies.push(performance.now() - started);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.result).toBe(i >= 18);
      }
    } finally {
      attacking = false;
      await attack;
    }
    expect(attackerStatuses.length).toBeGreaterThan(1);
    expect(new Set(attackerStatuses)).toEqual(new Set([200]));
    // Each victim run waits for at most the runaway evaluation in progress (the budget bounds it).
    expect(Math.max(...latencies)).toBeLessThan(1500);
  });

  it('answers 429 with retry-after past the per-caller limit (EXEC_CALLER_MAX), other keys unaffected', async () => {
    const burst = await Promise.all(Array.from({ length: 12 }, () => call(stack, 'POST', '/run', { key: attacker, body: runawayBody() })));
    const limited = burst.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    // The admitted ones: budget_exceeded; on a loaded machine one may also wait past EXEC_QUEUE_WAIT_MS (503, retry-after).
    for (const r of burst.filter((b) => b.status !== 429)) {
      if (r.status === 503) expect(r.headers.get('retry-after')).not.toBeNull();
      else expect([r.status, r.body.errorCode]).toEqual([200, 'budget_exceeded']);
    }
    expect(burst.some((r) => r.status === 200)).toBe(true);
    expect(limited[0].headers.get('retry-after')).toBe('1');
    expect(limited[0].headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(limited[0].body).toMatchObject({
      status: 429,
      code: 'rate_limited',
      detail: 'too many evaluations in progress for this caller (at most 4 at a time)',
    });
    const other = await call(stack, 'POST', '/run', { key: victim, body: ORDINARY });
    expect(other.status).toBe(200);
  });
});
