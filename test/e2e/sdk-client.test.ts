/**
 * The SDK client against the whole stack: typed calls of the endpoint groups, and every
 * unhappy path a caller meets (401, 403, 404, 409, 413, 422, 429 with retry-after, 503) thrown as
 * one ArbiterError carrying status, code, detail and the request id.
 */

import { Arbiter, ArbiterError } from '@arbiter/sdk';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './harness.js';

let stack: Stack;
let admin: Arbiter;
const RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  stack = await startStack({
    services: ['registry', 'execution', 'audit', 'gateway'],
    env: { RATE_LIMIT_MAX: '25', RATE_LIMIT_WINDOW: '3000' },
  });
  admin = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
});
afterAll(async () => {
  await stack?.stop();
});

async function failure(call: Promise<unknown>): Promise<ArbiterError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ArbiterError) return err;
    throw err;
  }
  throw new Error('expected an ArbiterError');
}

/** A new member with `role` signs in with a bearer token (through the client) and makes its own key with `scopes`. */
async function memberKey(userId: string, role: 'viewer' | 'editor', scopes: Array<'view' | 'edit'>): Promise<string> {
  await admin.users.setRole(userId, role);
  const token = await new SignJWT({ org: stack.orgId, sub: userId })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(stack.issuer)
    .setAudience(stack.audience)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(stack.jwtSecret));
  return (await new Arbiter({ baseUrl: stack.baseUrl, token: () => token }).apiKeys.create({ name: userId, scopes })).key;
}

describe('the client', () => {
  it('creates, publishes, lists, runs and deletes through typed calls', async () => {
    const draft = await admin.policies.create({
      name: 'typed',
      rule: RULE,
      tests: [{ name: 'adult', data: { applicant: { age: 30 } }, expect: true }],
    });
    const published = await admin.policies.update(draft.policyId, { status: 'published' });
    expect(published).toMatchObject({ outcome: 'published', record: { version: 1, baseId: draft.baseId } });
    const listed = await admin.policies.list({ q: 'typed', pageSize: 1 }).toArray();
    expect(listed.map((p) => p.baseId)).toEqual([draft.baseId]);
    expect(await admin.policies.run(draft.baseId, { applicant: { age: 20 } })).toMatchObject({ result: true, version: 1 });
    expect((await admin.policies.runBatch(draft.baseId, [{ applicant: { age: 20 } }, { applicant: { age: 2 } }])).results).toMatchObject([
      { result: true },
      { result: false },
    ]);
    expect(await admin.rules.validate(RULE)).toEqual({ valid: true, error: null, checks: [], checksComplete: true });
    const group = await admin.groups.create({ name: 'typed group' });
    await admin.groups.addMember(group.groupId, { memberId: draft.baseId, memberType: 'policy' });
    expect((await admin.groups.policies(group.groupId).toArray()).map((p) => p.baseId)).toEqual([draft.baseId]);
    expect(await admin.org.settings()).toEqual({ governanceApproval: false, minCoverage: 0 });
    expect((await admin.me()).userId).toBe('admin');
    await admin.policies.delete(draft.policyId);
    expect((await admin.policies.listDeleted().toArray()).map((p) => p.baseId)).toContain(draft.baseId);
  });
});

describe('unhappy paths', () => {
  it('401: an unknown key', async () => {
    const err = await failure(new Arbiter({ baseUrl: stack.baseUrl, apiKey: 'arb_not_a_key_of_ours_at_all_0000' }).me());
    expect(err).toMatchObject({ status: 401, code: 'unauthenticated', detail: 'the API key is not valid' });
    expect(err.requestId).toMatch(UUID);
  });

  it('403: a viewer creating a policy', async () => {
    const viewer = new Arbiter({ baseUrl: stack.baseUrl, apiKey: await memberKey('vera', 'viewer', ['view']) });
    const err = await failure(viewer.policies.create({ name: 'nope', rule: RULE }));
    expect(err).toMatchObject({ status: 403, code: 'forbidden' });
    expect(err.detail).toContain('edit');
  });

  it('404: an unknown policy', async () => {
    const err = await failure(admin.policies.get('0190a0b0-0000-7000-8000-00000000dead'));
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('409: editing a published version', async () => {
    const draft = await admin.policies.create({ name: 'immutable', rule: RULE });
    await admin.policies.update(draft.policyId, { status: 'published' });
    const err = await failure(admin.policies.update(draft.policyId, { status: 'draft', name: 'changed' }));
    expect(err).toMatchObject({ status: 409, code: 'version_immutable' });
  });

  it('413: a body over the limit', async () => {
    const err = await failure(admin.rules.evaluate({ rule: RULE, data: { blob: 'x'.repeat(1_100_000) } }));
    expect(err).toMatchObject({ status: 413, code: 'payload_too_large' });
  });

  it('422: a publish whose saved test fails, with its reasons', async () => {
    const draft = await admin.policies.create({
      name: 'failing test',
      rule: RULE,
      tests: [{ name: 'child', data: { applicant: { age: 3 } }, expect: true }],
    });
    const err = await failure(admin.policies.update(draft.policyId, { status: 'published' }));
    expect(err).toMatchObject({ status: 422, code: 'cannot_publish' });
    expect(err.errors?.length).toBeGreaterThan(0);
  });

  it('429: refused with retry-after; the client waits for it and tries again, or throws when told not to', async () => {
    const key = await memberKey('rita', 'viewer', ['view']);
    const limited = new Arbiter({ baseUrl: stack.baseUrl, apiKey: key, retries: { max: 3, maxRetryAfterMs: 10_000 } });
    const once = new Arbiter({ baseUrl: stack.baseUrl, apiKey: key, retries: { max: 0 } });
    let refused: ArbiterError | undefined;
    for (let i = 0; i < 40 && refused === undefined; i++) {
      refused = await once.me().then(
        () => undefined,
        (err: unknown) => (err instanceof ArbiterError ? err : undefined),
      );
    }
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited' });
    // the same key, with retries: waits out retry-after and succeeds
    expect((await limited.me()).userId).toBe('rita');
  });

  it('503: a dependency down (the registry), and the client does not wait when told not to retry', async () => {
    const once = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey, retries: { max: 0 } });
    await stack.stopService('registry');
    try {
      const err = await failure(once.policies.list().toArray());
      expect(err).toMatchObject({ status: 503, code: 'dependency_unavailable' });
      expect(err.requestId).toMatch(UUID);
    } finally {
      await stack.startService('registry');
    }
    expect(await once.policies.list().toArray()).toBeInstanceOf(Array);
  });
});
