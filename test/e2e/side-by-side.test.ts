/**
 * Two stacks on one machine (docs/operations.md, "Several stacks on one machine"): each started
 * with only its own DATABASE_URL, subject prefix and port, as `npm start` would be. Their
 * governance and audit databases follow DATABASE_URL, so neither reads the other's audit trail.
 */
import pg from 'pg';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, PG_ADMIN_URL, startStack, type Stack } from './harness.js';

let a: Stack;
let b: Stack;

const databaseOf = (stack: Stack): string => new URL(stack.env.DATABASE_URL).pathname.slice(1);

async function createdPolicyNames(stack: Stack): Promise<string[]> {
  const res = await call(stack, 'GET', '/audit?kind=created&resourceType=policy&limit=200', { key: stack.adminKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.items as Array<{ details: { name: string } }>).map((e) => e.details.name).sort();
}

beforeAll(async () => {
  a = await startStack({ services: ['registry', 'governance', 'audit', 'gateway'] });
  b = await startStack({ services: ['registry', 'governance', 'audit', 'gateway'] });
}, 180_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

describe('two stacks with different DATABASE_URLs', () => {
  it('are started without their own governance or audit database settings', () => {
    for (const stack of [a, b]) {
      expect(stack.env).not.toHaveProperty('AUDIT_DATABASE_URL');
      expect(stack.env).not.toHaveProperty('GOVERNANCE_DATABASE_URL');
    }
    expect(databaseOf(a)).not.toBe(databaseOf(b));
  });

  it('keep separate audit trails and governance databases, each beside its DATABASE_URL', async () => {
    for (const [stack, name] of [
      [a, 'only in stack A'],
      [b, 'only in stack B'],
    ] as const) {
      const res = await call(stack, 'POST', '/policy', {
        key: stack.adminKey,
        body: { name, rule: 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    // Once each trail holds its own event, a shared trail would hold both.
    await eventually(async () => expect(await createdPolicyNames(a)).toContain('only in stack A'));
    await eventually(async () => expect(await createdPolicyNames(b)).toContain('only in stack B'));
    expect(await createdPolicyNames(a)).toEqual(['only in stack A']);
    expect(await createdPolicyNames(b)).toEqual(['only in stack B']);

    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    try {
      const wanted = [a, b].flatMap((s) => [`${databaseOf(s)}_audit`, `${databaseOf(s)}_governance`]);
      const found = await admin.query<{ datname: string }>('select datname from pg_database where datname = any($1)', [wanted]);
      expect(found.rows.map((r) => r.datname).sort()).toEqual([...wanted].sort());
    } finally {
      await admin.end();
    }
  });
});
