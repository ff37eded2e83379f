/**
 * End-to-end through gateway → NATS → governance → registry, with governance on: submitting a
 * draft runs the publish checks (422 at submit, not only at the final publish), the reviewer sees
 * that they passed, the review inbox (`GET /reviews`, and the SDK's `reviews.inbox`) lists what
 * waits with who asked and when, and a base id works on every route that acts on the base.
 */

import { SignJWT } from 'jose';
import { ArbiterClient } from '@arbiter/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';

let stack: Stack;
const key = {} as Record<'eddie' | 'pat' | 'vera', string>;

async function token(sub: string): Promise<string> {
  return new SignJWT({ org: stack.orgId })
    .setSubject(sub)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(stack.issuer)
    .setAudience(stack.audience)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(stack.jwtSecret));
}

async function member(userId: string, role: string, scopes: string[]): Promise<string> {
  expect([200, 201]).toContain((await call(stack, 'PUT', `/users/${userId}`, { key: stack.adminKey, body: { role } })).status);
  const res = await call(stack, 'POST', '/apikeys', {
    headers: { authorization: `Bearer ${await token(userId)}` },
    body: { name: userId, scopes },
  });
  expect(res.status).toBe(201);
  return res.body.key as string;
}

beforeAll(async () => {
  stack = await startStack({ services: ['registry', 'governance', 'gateway'] });
  expect((await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: true } })).status).toBe(200);
  key.eddie = await member('eddie', 'editor', ['view', 'edit']);
  key.pat = await member('pat', 'publisher', ['view', 'edit', 'publish']);
  key.vera = await member('vera', 'viewer', ['view']);
});

afterAll(async () => {
  await stack?.stop();
});

describe('checks at submit and the review inbox', () => {
  it('a draft whose saved test fails is refused at submit (422), then, fixed, waits in the inbox with its checks', async () => {
    const failing = { name: 'sixteen', data: { driver: { age: 16 } }, expect: true };
    const created = await call(stack, 'POST', '/policy', { key: key.eddie, body: { name: 'Licence', rule: RULE, tests: [failing] } });
    expect(created.status).toBe(201);
    const id = created.body.policyId as string;
    const refused = await call(stack, 'PUT', `/policy/${id}`, { key: key.eddie, body: { status: 'published' } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      code: 'cannot_publish',
      errors: [expect.objectContaining({ code: 'test_failed', path: 'tests.0' })],
    });
    expect((await call(stack, 'GET', `/policy/${id}/review`, { key: key.pat })).body).toMatchObject({ state: 'draft', requestId: null });
    expect((await call(stack, 'GET', '/reviews?state=pending_approval', { key: key.pat })).body).toEqual({ items: [], nextCursor: null });

    expect(
      (await call(stack, 'PUT', `/policy/${id}`, { key: key.eddie, body: { status: 'draft', tests: [{ ...failing, expect: false }] } }))
        .status,
    ).toBe(200);
    const submitted = await call(stack, 'PUT', `/policy/${id}`, { key: key.eddie, body: { status: 'published' } });
    expect(submitted.status).toBe(202);
    // the one test sees the one condition false only: half covered
    expect(submitted.body.checks).toEqual({
      passed: true,
      checkedAt: expect.any(String),
      coverage: {
        conditions: { total: 1, covered: 0 },
        quantifiers: { total: 0, covered: 0 },
        references: { total: 0, covered: 0 },
        percent: 50,
      },
      warnings: [],
    });

    const inbox = await call(stack, 'GET', '/reviews?state=pending_approval', { key: key.pat });
    expect(inbox.status).toBe(200);
    expect(inbox.body).toEqual({
      items: [
        expect.objectContaining({
          kind: 'policy',
          recordId: id,
          baseId: created.body.baseId,
          name: 'Licence',
          state: 'pending_approval',
          requestedBy: 'eddie',
          requestedAt: submitted.body.requestedAt,
          checks: submitted.body.checks,
        }),
      ],
      nextCursor: null,
    });
    const sdk = new ArbiterClient({ baseUrl: stack.baseUrl, apiKey: key.pat });
    expect((await sdk.reviews.inbox().toArray()).map((i) => i.recordId)).toEqual([id]);
    for (const who of [key.eddie, key.vera]) expect((await call(stack, 'GET', '/reviews', { key: who })).status).toBe(403);

    // the reviewer acts by base id; the final publish runs the checks again and makes version 1
    const baseId = created.body.baseId as string;
    expect((await call(stack, 'POST', `/policy/${baseId}/review/approve`, { key: key.pat })).body).toMatchObject({ state: 'approved' });
    const published = await call(stack, 'POST', `/policy/${baseId}/review/publish`, { key: key.pat });
    expect(published.status).toBe(201);
    expect(published.body).toMatchObject({ policyId: id, version: 1 });
    expect((await call(stack, 'GET', '/reviews', { key: key.pat })).body.items).toEqual([]);
  });

  it('base ids: versions, draft (also through the SDK), delete and restore act on the base', async () => {
    const created = await call(stack, 'POST', '/policy', { key: key.pat, body: { name: 'By base', rule: RULE } });
    const baseId = created.body.baseId as string;
    expect((await call(stack, 'GET', `/policy/${baseId}/versions`, { key: key.vera })).body.items).toHaveLength(1);
    const sdk = new ArbiterClient({ baseUrl: stack.baseUrl, apiKey: key.eddie });
    expect(await sdk.policies.draft(baseId)).toMatchObject({ created: false, record: { policyId: created.body.policyId } });
    expect((await call(stack, 'DELETE', `/policy/${baseId}`, { key: stack.adminKey })).status).toBe(204);
    expect((await call(stack, 'POST', `/policy/${baseId}/restore`, { key: stack.adminKey })).status).toBe(200);
  });
});
