/**
 * End-to-end: stored policies, flows and groups through gateway → NATS → registry
 *: the permission matrix of every endpoint, ownership visibility, immutable
 * versions, publish checks, soft delete, concurrent publishes, governance, and the `assigned` event
 * of a role change on the JetStream stream. Running stored resources is covered elsewhere.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStreamName } from '@arbiter/contracts';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let nc: NatsConnection;

type Role = 'viewer' | 'editor' | 'publisher' | 'admin' | 'auditor' | 'orgB';
const ROLES: Role[] = ['viewer', 'editor', 'publisher', 'admin', 'auditor', 'orgB'];
/** Org A (`acme`) members and the admin of org B (`globex`); `erin` is a second editor (a colleague). */
const key = {} as Record<Role | 'erin', string>;
const USER: Record<Role | 'erin', string> = {
  viewer: 'vera',
  editor: 'eddie',
  publisher: 'pat',
  admin: 'admin',
  auditor: 'audrey',
  orgB: 'boss',
  erin: 'erin',
};

const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';
const ADULT = { name: 'adult', data: { driver: { age: 18 } }, expect: true };
const SCHEMA = { type: 'object', properties: { driver: { type: 'object', properties: { age: { type: 'number' } } } } };

let sharedPolicy: { policyId: string; baseId: string };

const unique = (label: string) => `${label} ${randomBytes(4).toString('hex')}`;

async function token(sub: string, org = stack.orgId): Promise<string> {
  return new SignJWT({ org })
    .setSubject(sub)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(stack.issuer)
    .setAudience(stack.audience)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(stack.jwtSecret));
}

/** Makes `userId` a member of org A with `role` and returns a key of theirs with every scope of the role. */
async function memberKey(userId: string, role: string, scopes: string[]): Promise<string> {
  const put = await call(stack, 'PUT', `/users/${userId}`, { key: stack.adminKey, body: { role } });
  expect([200, 201]).toContain(put.status);
  const res = await call(stack, 'POST', '/apikeys', {
    headers: { authorization: `Bearer ${await token(userId)}` },
    body: { name: `${userId}-key`, scopes },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key as string;
}

/** A call that must succeed with `status`; returns the body. */
async function ok(status: number, method: string, url: string, as: string, body?: unknown): Promise<any> {
  const res = await call(stack, method, url, { key: as, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** The raw body text of a GET (to compare answers byte for byte). */
async function raw(url: string, as = key.admin): Promise<{ status: number; text: string }> {
  const res = await fetch(`${stack.baseUrl}${url}`, { headers: { 'x-api-key': as } });
  return { status: res.status, text: await res.text() };
}

const policyBody = (over: Record<string, unknown> = {}) => ({
  name: unique('policy'),
  rule: RULE,
  schema: SCHEMA,
  tests: [ADULT],
  ...over,
});
const flowDefinition = (baseId: string) => ({
  start: 'check',
  nodes: {
    check: { type: 'policy', baseId, onTrue: 'yes', onFalse: 'review' },
    yes: { type: 'return', value: true },
    review: { type: 'custom', outcome: 'manual review' },
  },
});
const flowBody = (over: Record<string, unknown> = {}) => ({
  name: unique('flow'),
  definition: flowDefinition(sharedPolicy.baseId),
  tests: [ADULT],
  ...over,
});

/** Policy and flow fixtures, created through the API. */
const KINDS = {
  policy: { noun: 'policy', plural: 'policies', idKey: 'policyId', body: policyBody },
  flow: { noun: 'flow', plural: 'flows', idKey: 'flowId', body: flowBody },
} as const;
type Kind = keyof typeof KINDS;

/** A never-published draft created by `as`. */
async function draftOf(
  kind: Kind,
  as = key.admin,
  over: Record<string, unknown> = {},
): Promise<{ id: string; baseId: string; record: any }> {
  const k = KINDS[kind];
  // The save answer is the record plus its static checks (docs/api.md#static-checks), which a read does not carry.
  const { checks, checksComplete, ...record } = await ok(201, 'POST', `/${k.noun}`, as, k.body(over));
  expect([checks, checksComplete]).toEqual([[], true]);
  return { id: record[k.idKey], baseId: record.baseId, record };
}

/** A base with version 1 and no draft; `id` is the version's record id. */
async function publishedOf(kind: Kind, as = key.admin): Promise<{ id: string; baseId: string; record: any }> {
  const d = await draftOf(kind, as);
  const record = await ok(201, 'PUT', `/${KINDS[kind].noun}/${d.id}`, key.admin, { status: 'published' });
  expect(record).toMatchObject({ status: 'published', version: 1 });
  return { id: record[KINDS[kind].idKey], baseId: record.baseId, record };
}

/** A published base plus its new draft (org-level ownership); `id` is the draft's id. */
async function redraftOf(kind: Kind): Promise<{ id: string; versionId: string; baseId: string }> {
  const v = await publishedOf(kind);
  const d = await ok(201, 'GET', `/${KINDS[kind].noun}/${v.id}/draft`, key.admin);
  return { id: d[KINDS[kind].idKey], versionId: v.id, baseId: v.baseId };
}

async function groupOf(as = key.editor): Promise<string> {
  return (await ok(201, 'POST', '/group', as, { name: unique('group') })).groupId as string;
}

/** Base ids in a list answer. */
const baseIds = (page: { items: Array<{ baseId: string }> }) => page.items.map((i) => i.baseId);

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'gateway'] });
  key.admin = stack.adminKey;
  key.viewer = await memberKey(USER.viewer, 'viewer', ['view']);
  key.editor = await memberKey(USER.editor, 'editor', ['view', 'edit']);
  key.erin = await memberKey(USER.erin, 'editor', ['view', 'edit']);
  key.publisher = await memberKey(USER.publisher, 'publisher', ['view', 'edit', 'publish']);
  key.auditor = await memberKey(USER.auditor, 'auditor', ['view', 'audit']);
  const created = stack.admin(['create-org', 'globex', '--admin', USER.orgB]);
  expect(created.status, created.stderr).toBe(0);
  key.orgB = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
  const shared = await publishedOf('policy');
  sharedPolicy = { policyId: shared.id, baseId: shared.baseId };
  nc = await connect({ servers: stack.env.NATS_URL });
});

afterAll(async () => {
  await nc?.close();
  await stack?.stop();
});

// ---------------------------------------------------------------------------------------------
// The permission matrix: every endpoint × viewer, editor, publisher, admin, auditor of org A and
// the admin of org B. Each cell gets fresh fixtures from `prepare`.

interface Cell {
  method: string;
  url: string;
  body?: unknown;
}
interface MatrixRow {
  name: string;
  prepare: () => Promise<Cell>;
  expect: Record<Role, number>;
}

const A_ONLY = (status: number): Record<Role, number> => ({
  viewer: status,
  editor: status,
  publisher: status,
  admin: status,
  auditor: status,
  orgB: 404,
});
const EVERYONE = (status: number): Record<Role, number> => ({ ...A_ONLY(status), orgB: status });

function recordRows(kind: Kind): MatrixRow[] {
  const { noun, plural } = KINDS[kind];
  return [
    {
      name: `POST /${noun}`,
      prepare: async () => ({ method: 'POST', url: `/${noun}`, body: KINDS[kind].body() }),
      // org B creates in its own org; a flow naming org A's policy is refused at save
      expect: { viewer: 403, editor: 201, publisher: 201, admin: 201, auditor: 403, orgB: kind === 'flow' ? 400 : 201 },
    },
    {
      name: `PUT /${noun}/{id} status draft, draft of a published base`,
      prepare: async () => ({
        method: 'PUT',
        url: `/${noun}/${(await redraftOf(kind)).id}`,
        body: { status: 'draft', description: 'edited' },
      }),
      expect: { viewer: 403, editor: 200, publisher: 200, admin: 200, auditor: 403, orgB: 404 },
    },
    {
      name: `PUT /${noun}/{id} status draft, never-published draft of a colleague`,
      prepare: async () => ({
        method: 'PUT',
        url: `/${noun}/${(await draftOf(kind, key.erin)).id}`,
        body: { status: 'draft', description: 'edited' },
      }),
      expect: { viewer: 403, editor: 403, publisher: 403, admin: 200, auditor: 403, orgB: 404 },
    },
    {
      name: `PUT /${noun}/{id} status published`,
      prepare: async () => ({ method: 'PUT', url: `/${noun}/${(await draftOf(kind)).id}`, body: { status: 'published' } }),
      expect: { viewer: 403, editor: 403, publisher: 201, admin: 201, auditor: 403, orgB: 404 },
    },
    {
      name: `GET /${noun}/{id} of a colleague's never-published draft`,
      prepare: async () => ({ method: 'GET', url: `/${noun}/${(await draftOf(kind, key.erin)).id}` }),
      expect: A_ONLY(200),
    },
    {
      name: `GET /${noun}/{id}/versions`,
      prepare: async () => ({ method: 'GET', url: `/${noun}/${(await redraftOf(kind)).versionId}/versions` }),
      expect: A_ONLY(200),
    },
    {
      name: `GET /${noun}/{id}/draft creating a draft from a version`,
      prepare: async () => ({ method: 'GET', url: `/${noun}/${(await publishedOf(kind)).id}/draft` }),
      expect: { viewer: 403, editor: 201, publisher: 201, admin: 201, auditor: 403, orgB: 404 },
    },
    {
      name: `GET /${noun}/{id}/draft returning the existing draft`,
      prepare: async () => ({ method: 'GET', url: `/${noun}/${(await redraftOf(kind)).versionId}/draft` }),
      expect: { viewer: 403, editor: 200, publisher: 200, admin: 200, auditor: 403, orgB: 404 },
    },
    { name: `GET /${plural}`, prepare: async () => ({ method: 'GET', url: `/${plural}` }), expect: EVERYONE(200) },
    {
      name: `DELETE /${noun}/{id}`,
      prepare: async () => ({ method: 'DELETE', url: `/${noun}/${(await draftOf(kind)).id}` }),
      expect: { viewer: 403, editor: 403, publisher: 403, admin: 204, auditor: 403, orgB: 404 },
    },
  ];
}

/** Groups created by the editor: only the creator (editor) and the admin manage them. */
const groupRows: MatrixRow[] = [
  {
    name: 'POST /group',
    prepare: async () => ({ method: 'POST', url: '/group', body: { name: unique('group') } }),
    expect: { viewer: 403, editor: 201, publisher: 201, admin: 201, auditor: 403, orgB: 201 },
  },
  { name: 'GET /group/{id}', prepare: async () => ({ method: 'GET', url: `/group/${await groupOf()}` }), expect: A_ONLY(200) },
  {
    name: 'PUT /group/{id}',
    prepare: async () => ({ method: 'PUT', url: `/group/${await groupOf()}`, body: { description: 'edited' } }),
    expect: { viewer: 403, editor: 200, publisher: 403, admin: 200, auditor: 403, orgB: 404 },
  },
  {
    name: 'DELETE /group/{id}',
    prepare: async () => ({ method: 'DELETE', url: `/group/${await groupOf()}` }),
    expect: { viewer: 403, editor: 204, publisher: 403, admin: 204, auditor: 403, orgB: 404 },
  },
  { name: 'GET /groups', prepare: async () => ({ method: 'GET', url: '/groups' }), expect: EVERYONE(200) },
  {
    name: 'POST /group/{id}/member',
    prepare: async () => ({
      method: 'POST',
      url: `/group/${await groupOf()}/member`,
      body: { memberId: sharedPolicy.baseId, memberType: 'policy' },
    }),
    expect: { viewer: 403, editor: 201, publisher: 403, admin: 201, auditor: 403, orgB: 404 },
  },
  {
    name: 'DELETE /group/{id}/member/{memberId}',
    prepare: async () => {
      const g = await groupOf();
      await ok(201, 'POST', `/group/${g}/member`, key.editor, { memberId: sharedPolicy.baseId, memberType: 'policy' });
      return { method: 'DELETE', url: `/group/${g}/member/${sharedPolicy.baseId}` };
    },
    expect: { viewer: 403, editor: 204, publisher: 403, admin: 204, auditor: 403, orgB: 404 },
  },
  {
    name: 'GET /group/{id}/policies',
    prepare: async () => ({ method: 'GET', url: `/group/${await groupOf()}/policies` }),
    expect: A_ONLY(200),
  },
  { name: 'GET /group/{id}/flows', prepare: async () => ({ method: 'GET', url: `/group/${await groupOf()}/flows` }), expect: A_ONLY(200) },
];

describe('permission matrix', () => {
  it.each([...recordRows('policy'), ...recordRows('flow'), ...groupRows].map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const got = {} as Record<Role, number>;
    for (const role of ROLES) {
      const cell = await row.prepare();
      const res = await call(stack, cell.method, cell.url, { key: key[role], ...(cell.body !== undefined ? { body: cell.body } : {}) });
      got[role] = res.status;
      if (res.status >= 400) {
        expect(res.headers.get('content-type'), `${role}: ${JSON.stringify(res.body)}`).toMatch(/application\/problem\+json/);
        expect(res.body.code).toBe({ 403: 'forbidden', 404: 'not_found' }[res.status as 403 | 404] ?? res.body.code);
      }
    }
    expect(got).toEqual(row.expect);
  });

  it('accepts a bearer JWT as well as an API key', async () => {
    const res = await call(stack, 'POST', '/policy', {
      headers: { authorization: `Bearer ${await token(USER.editor)}` },
      body: policyBody(),
    });
    expect(res.status).toBe(201);
    expect(res.body.createdBy).toBe(USER.editor);
  });

  it('never shows org A resources to org B in lists', async () => {
    const p = await publishedOf('policy');
    const f = await publishedOf('flow');
    const g = await groupOf(key.admin);
    expect(baseIds(await ok(200, 'GET', '/policies?limit=200', key.orgB))).not.toContain(p.baseId);
    expect(baseIds(await ok(200, 'GET', '/flows?limit=200', key.orgB))).not.toContain(f.baseId);
    expect((await ok(200, 'GET', '/groups?limit=200', key.orgB)).items.map((i: { groupId: string }) => i.groupId)).not.toContain(g);
    // and org B cannot add org A's base to its own group
    const bGroup = await groupOf(key.orgB);
    expect(
      (await call(stack, 'POST', `/group/${bGroup}/member`, { key: key.orgB, body: { memberId: p.baseId, memberType: 'policy' } })).status,
    ).toBe(404);
  });
});

// ---------------------------------------------------------------------------------------------
// Unhappy paths of every endpoint: no credentials, unknown id, deleted base, malformed body.

interface Endpoint {
  method: string;
  /** `:id` is a record id (or group id), `:member` a member base id. */
  path: string;
  body?: () => unknown;
  kind?: Kind | 'group';
}

const ENDPOINTS: Endpoint[] = [
  ...(['policy', 'flow'] as const).flatMap((kind): Endpoint[] => {
    const { noun, plural } = KINDS[kind];
    return [
      { method: 'POST', path: `/${noun}`, body: () => KINDS[kind].body() },
      { method: 'PUT', path: `/${noun}/:id`, body: () => ({ status: 'draft', description: 'x' }), kind },
      { method: 'GET', path: `/${noun}/:id`, kind },
      { method: 'GET', path: `/${noun}/:id/versions`, kind },
      { method: 'GET', path: `/${noun}/:id/draft`, kind },
      { method: 'GET', path: `/${plural}` },
      { method: 'DELETE', path: `/${noun}/:id`, kind },
    ];
  }),
  { method: 'POST', path: '/group', body: () => ({ name: 'g' }) },
  { method: 'GET', path: '/group/:id', kind: 'group' },
  { method: 'PUT', path: '/group/:id', body: () => ({ name: 'renamed' }), kind: 'group' },
  { method: 'DELETE', path: '/group/:id', kind: 'group' },
  { method: 'GET', path: '/groups' },
  { method: 'POST', path: '/group/:id/member', body: () => ({ memberId: sharedPolicy.baseId, memberType: 'policy' }), kind: 'group' },
  { method: 'DELETE', path: '/group/:id/member/:member', kind: 'group' },
  { method: 'GET', path: '/group/:id/policies', kind: 'group' },
  { method: 'GET', path: '/group/:id/flows', kind: 'group' },
];
const label = (e: Endpoint) => `${e.method} ${e.path}`;
const fill = (path: string, id: string, member = sharedPolicy.baseId) => path.replace(':id', id).replace(':member', member);

describe('unhappy paths of every endpoint', () => {
  it.each(ENDPOINTS.map((e) => [label(e), e] as const))('%s: 401 without credentials or with a bad token', async (_l, e) => {
    const url = fill(e.path, sharedPolicy.policyId);
    const body = e.body?.();
    for (const headers of [{}, { authorization: 'Bearer not-a-jwt' }, { authorization: 'Basic abc' }] as Array<Record<string, string>>) {
      const res = await call(stack, e.method, url, { headers, ...(body !== undefined ? { body } : {}) });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthenticated');
    }
  });

  it.each(ENDPOINTS.filter((e) => e.kind).map((e) => [label(e), e] as const))('%s: 404 for an unknown id', async (_l, e) => {
    const body = e.body?.();
    for (const id of [randomUUID(), 'not-an-id']) {
      const res = await call(stack, e.method, fill(e.path, id), { key: key.admin, ...(body !== undefined ? { body } : {}) });
      expect(res.status, `${id}: ${JSON.stringify(res.body)}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it.each(ENDPOINTS.filter((e) => e.kind).map((e) => [label(e), e] as const))(
    '%s: 404 once the base (or group) is deleted',
    async (_l, e) => {
      let url: string;
      if (e.kind === 'group') {
        const g = await groupOf(key.admin);
        await ok(204, 'DELETE', `/group/${g}`, key.admin);
        url = fill(e.path, g);
      } else {
        const r = await redraftOf(e.kind!);
        await ok(204, 'DELETE', `/${KINDS[e.kind!].noun}/${r.id}`, key.admin);
        url = fill(e.path, r.versionId); // any record id of the deleted base
      }
      const body = e.body?.();
      const res = await call(stack, e.method, url, { key: key.admin, ...(body !== undefined ? { body } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body.code).toBe('not_found');
    },
  );

  it('404 for adding or removing a deleted base as a group member', async () => {
    const g = await groupOf(key.admin);
    const p = await publishedOf('policy');
    await ok(201, 'POST', `/group/${g}/member`, key.admin, { memberId: p.baseId, memberType: 'policy' });
    await ok(204, 'DELETE', `/policy/${p.id}`, key.admin);
    expect((await call(stack, 'DELETE', `/group/${g}/member/${p.baseId}`, { key: key.admin })).status).toBe(404);
    expect(
      (await call(stack, 'POST', `/group/${g}/member`, { key: key.admin, body: { memberId: p.baseId, memberType: 'policy' } })).status,
    ).toBe(404);
    // a record id is not a base id, and a policy base is not a flow
    const other = await publishedOf('policy');
    expect(
      (await call(stack, 'POST', `/group/${g}/member`, { key: key.admin, body: { memberId: other.baseId, memberType: 'flow' } })).status,
    ).toBe(404);
  });

  it.each(ENDPOINTS.filter((e) => e.body).map((e) => [label(e), e] as const))(
    '%s: 400 for malformed JSON, an unknown field or a wrong type',
    async (_l, e) => {
      const target = e.kind === 'group' ? await groupOf(key.admin) : e.kind ? (await draftOf(e.kind)).id : '';
      const url = fill(e.path, target);
      const good = e.body!() as Record<string, unknown>;
      const bad = [
        { rawBody: '{"name": ' },
        { body: { ...good, surprise: true } },
        { body: Object.fromEntries(Object.keys(good).map((k) => [k, 12345])) },
        { body: [] },
      ];
      for (const b of bad) {
        const res = await call(stack, e.method, url, { key: key.admin, ...b });
        expect(res.status, `${JSON.stringify(b)}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      }
    },
  );

  it('400 for list queries out of range', async () => {
    for (const url of [
      '/policies?limit=0',
      '/flows?limit=201',
      '/groups?limit=x',
      `/policy/${sharedPolicy.policyId}/versions?limit=500`,
      '/policies?cursor=',
    ]) {
      expect((await call(stack, 'GET', url, { key: key.admin })).status, url).toBe(400);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('ownership and visibility', () => {
  it('lists filter by status, creator and group, sort by name with stable cursors, all=true for admins, 400 for bad values of known parameters, unknown ones ignored', async () => {
    const stem = unique('lst');
    const mine = await draftOf('policy', key.erin, { name: `${stem}-b` });
    const named = await draftOf('policy', key.admin, { name: `${stem}-c` });
    await ok(201, 'PUT', `/policy/${named.id}`, key.admin, { status: 'published' });
    const q = `/policies?q=${encodeURIComponent(stem)}`;
    expect(baseIds(await ok(200, 'GET', `${q}&status=draft`, key.erin))).toEqual([mine.baseId]);
    expect(baseIds(await ok(200, 'GET', `${q}&status=draft`, key.admin))).toEqual([]);
    expect(baseIds(await ok(200, 'GET', `${q}&status=draft&all=true`, key.admin))).toEqual([mine.baseId]);
    expect(baseIds(await ok(200, 'GET', `${q}&createdBy=${USER.erin}`, key.erin))).toEqual([mine.baseId]);
    expect((await call(stack, 'GET', `${q}&all=true`, { key: key.erin })).status).toBe(403);
    expect((await call(stack, 'GET', `${q}&all=true`, { key: key.orgB })).body.items ?? []).toEqual([]);
    const g = await groupOf(key.admin);
    await ok(201, 'POST', `/group/${g}/member`, key.admin, { memberId: named.baseId, memberType: 'policy' });
    expect(baseIds(await ok(200, 'GET', `${q}&group=${g}`, key.viewer))).toEqual([named.baseId]);
    // sort by name, one per page, both ways
    const walk = async (sort: string) => {
      const seen: string[] = [];
      let url = `${q}&all=true&sort=${sort}&limit=1`;
      for (;;) {
        const page = await ok(200, 'GET', url, key.admin);
        seen.push(...baseIds(page));
        if (page.nextCursor === null) return seen;
        url = `${q}&all=true&sort=${sort}&limit=1&cursor=${encodeURIComponent(page.nextCursor as string)}`;
      }
    };
    expect(await walk('name')).toEqual([mine.baseId, named.baseId]);
    expect(await walk('-name')).toEqual([named.baseId, mine.baseId]);
    for (const list of ['/policies', '/flows'])
      expect((await call(stack, 'GET', `${list}?unknown=1`, { key: key.admin })).status).toBe(200);
    for (const bad of ['sort=size', 'status=gone', 'group=nope', 'all=maybe']) {
      for (const list of ['/policies', '/flows']) expect((await call(stack, 'GET', `${list}?${bad}`, { key: key.admin })).status).toBe(400);
    }
  });

  it('a never-published policy is listed for its creator only, loadable by id by a colleague, and listed for all once published', async () => {
    const name = unique('owned');
    const d = await draftOf('policy', key.erin, { name });
    const g = await groupOf(key.erin);
    await ok(201, 'POST', `/group/${g}/member`, key.erin, { memberId: d.baseId, memberType: 'policy' });
    const q = `/policies?q=${encodeURIComponent(name)}`;
    expect(baseIds(await ok(200, 'GET', q, key.erin))).toEqual([d.baseId]);
    expect(baseIds(await ok(200, 'GET', q, key.editor))).toEqual([]);
    expect(baseIds(await ok(200, 'GET', q, key.admin))).toEqual([]);
    expect(baseIds(await ok(200, 'GET', `/group/${g}/policies`, key.erin))).toEqual([d.baseId]);
    expect(baseIds(await ok(200, 'GET', `/group/${g}/policies`, key.editor))).toEqual([]);
    // a single-record GET also names the groups the base is in
    const loaded = { ...d.record, groups: [{ groupId: g, name: expect.any(String) }] };
    expect(await ok(200, 'GET', `/policy/${d.id}`, key.editor)).toEqual(loaded);
    expect(await ok(200, 'GET', `/policy/${d.id}`, key.viewer)).toEqual(loaded);
    // by base id: the draft while never published; 404 in another org
    expect(await ok(200, 'GET', `/policy/${d.baseId}`, key.viewer)).toEqual(loaded);
    expect((await call(stack, 'GET', `/policy/${d.baseId}`, { key: key.orgB })).status).toBe(404);
    expect((await call(stack, 'GET', `/flow/${d.baseId}`, { key: key.viewer })).status).toBe(404);
    // only the creator (or an admin) edits it
    expect(
      (await call(stack, 'PUT', `/policy/${d.id}`, { key: key.editor, body: { status: 'draft', description: 'mine now' } })).status,
    ).toBe(403);
    await ok(200, 'PUT', `/policy/${d.id}`, key.erin, { status: 'draft', description: 'still mine' });

    // The publish answer carries the static checks besides the record a read answers.
    const {
      checks: _checks,
      checksComplete: _complete,
      ...v1
    } = await ok(201, 'PUT', `/policy/${d.id}`, key.publisher, { status: 'published' });
    expect(await ok(200, 'GET', `/policy/${d.baseId}`, key.viewer)).toEqual({ ...v1, groups: loaded.groups });
    for (const who of [key.erin, key.editor, key.viewer, key.auditor, key.admin]) {
      expect(baseIds(await ok(200, 'GET', q, who))).toEqual([d.baseId]);
      expect(baseIds(await ok(200, 'GET', `/group/${g}/policies`, who))).toEqual([d.baseId]);
    }
    expect(baseIds(await ok(200, 'GET', q, key.orgB))).toEqual([]);
  });

  it('the same holds for flows', async () => {
    const name = unique('owned flow');
    const d = await draftOf('flow', key.erin, { name });
    const q = `/flows?q=${encodeURIComponent(name)}`;
    expect(baseIds(await ok(200, 'GET', q, key.erin))).toEqual([d.baseId]);
    expect(baseIds(await ok(200, 'GET', q, key.editor))).toEqual([]);
    expect((await ok(200, 'GET', `/flow/${d.id}`, key.editor)).flowId).toBe(d.id);
    await ok(201, 'PUT', `/flow/${d.id}`, key.publisher, { status: 'published' });
    expect(baseIds(await ok(200, 'GET', q, key.editor))).toEqual([d.baseId]);
  });

  it('pages lists with limit and cursor and searches by name', async () => {
    const stem = unique('paged');
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await draftOf('policy', key.admin, { name: `${stem} ${i}` }));
    const first = await ok(200, 'GET', `/policies?q=${encodeURIComponent(stem)}&limit=2`, key.admin);
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await ok(
      200,
      'GET',
      `/policies?q=${encodeURIComponent(stem)}&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`,
      key.admin,
    );
    expect(second.nextCursor).toBeNull();
    expect([...baseIds(first), ...baseIds(second)].sort()).toEqual(made.map((m) => m.baseId).sort());
    expect(first.items[0]).toMatchObject({ name: `${stem} 2`, status: 'draft', version: null, latestVersion: null, draftId: made[2].id });
  });
});

describe('versions', () => {
  it('never change after publish: PUT on a version is 409 and the version reads byte-identical', async () => {
    const v1 = await publishedOf('policy');
    const before = await raw(`/policy/${v1.id}`);
    expect(before.status).toBe(200);
    for (const body of [
      { status: 'draft', rule: 'A **x** passes if the __a__ of the **x** is 1.' },
      { status: 'published' },
      { status: 'published', name: 'renamed' },
    ]) {
      const res = await call(stack, 'PUT', `/policy/${v1.id}`, { key: key.admin, body });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('version_immutable');
    }
    // a new draft and a second version leave version 1 alone
    const d = await ok(201, 'GET', `/policy/${v1.id}/draft`, key.editor);
    expect(d).toMatchObject({ status: 'draft', basedOnVersion: 1, baseId: v1.baseId, rule: RULE });
    await ok(200, 'PUT', `/policy/${d.policyId}`, key.editor, { status: 'draft', rule: RULE.replace('17', '18'), tests: [] });
    const v2 = await ok(201, 'PUT', `/policy/${d.policyId}`, key.publisher, { status: 'published' });
    expect(v2).toMatchObject({ policyId: d.policyId, status: 'published', version: 2, publishedBy: USER.publisher });
    expect(await raw(`/policy/${v1.id}`)).toEqual(before);
    const versions = await ok(200, 'GET', `/policy/${v1.id}/versions`, key.viewer);
    expect(versions.items.map((r: { version: number | null }) => r.version)).toEqual([2, 1]);
    // the list items are the record without `groups`, which only single-record GETs carry, with its
    // interval on the base's timeline (version 1 ran from its publish until version 2's)
    const { groups, ...version1 } = JSON.parse(before.text) as Record<string, unknown>;
    expect(groups).toEqual([]);
    expect(versions.items[1]).toEqual({
      ...version1,
      effectiveFrom: version1.publishedAt,
      effectiveUntil: v2.publishedAt,
      cancelled: false,
      rollbackOf: null,
    });
  });

  it('GET .../versions lists the draft first, from any record id of the base', async () => {
    const r = await redraftOf('flow');
    const a = await ok(200, 'GET', `/flow/${r.id}/versions`, key.viewer);
    const b = await ok(200, 'GET', `/flow/${r.versionId}/versions`, key.viewer);
    expect(a).toEqual(b);
    expect(a.items.map((x: { flowId: string; status: string }) => [x.flowId, x.status])).toEqual([
      [r.id, 'draft'],
      [r.versionId, 'published'],
    ]);
  });

  it('two simultaneous publishes of one draft make exactly one version: one 201, one 409', async () => {
    for (const kind of ['policy', 'flow'] as const) {
      const r = await redraftOf(kind);
      const noun = KINDS[kind].noun;
      const [a, b] = await Promise.all([
        call(stack, 'PUT', `/${noun}/${r.id}`, { key: key.admin, body: { status: 'published' } }),
        call(stack, 'PUT', `/${noun}/${r.id}`, { key: key.publisher, body: { status: 'published' } }),
      ]);
      expect([a.status, b.status].sort()).toEqual([201, 409]);
      expect([a, b].find((x) => x.status === 409)!.body.code).toMatch(/^(version_immutable|conflict)$/);
      const versions = await ok(200, 'GET', `/${noun}/${r.versionId}/versions`, key.admin);
      expect(versions.items.map((x: { version: number | null }) => x.version)).toEqual([2, 1]);
    }
  });
});

describe('publish checks', () => {
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['a rule that does not parse', { rule: 'A **driver** gets a licence if the __age__ of the **driver** is gold.' }, ['parse_error']],
    [
      'a schema missing a path the rule reads, and a failing saved test',
      {
        schema: { type: 'object', properties: { driver: { type: 'object', properties: { name: { type: 'string' } } } } },
        tests: [{ name: 'minor', data: { driver: { age: 10 } }, expect: true }],
      },
      ['schema_path_missing', 'test_failed'],
    ],
    [
      'saved-test data the schema refuses, and a failing saved test',
      {
        schema: { type: 'object', properties: { driver: { type: 'object', properties: { age: { type: 'integer', minimum: 0 } } } } },
        tests: [
          { name: 'negative', data: { driver: { age: -1 } }, expect: false },
          { name: 'wrong', data: { driver: { age: 1 } }, expect: true },
        ],
      },
      ['test_failed', 'test_failed'],
    ],
  ];

  it('400 at save for a JSON Schema ajv cannot use (`invalid_schema`) or one that loops on itself (`schema_loop`)', async () => {
    for (const [schema, reason] of [
      [{ type: 'nonsense' }, 'invalid_schema'],
      [{ $ref: '#' }, 'schema_loop'],
      [{ allOf: [{ $ref: '#' }] }, 'schema_loop'],
    ] as const) {
      const res = await call(stack, 'POST', '/policy', { key: key.admin, body: KINDS.policy.body({ schema }) });
      expect([res.status, res.body.code], JSON.stringify(schema)).toEqual([400, 'validation_failed']);
      expect(res.body.errors, JSON.stringify(schema)).toEqual([
        expect.objectContaining({ code: reason, path: expect.stringMatching(/schema$/) }),
      ]);
    }
  });

  it.each(cases)('422 with every reason for %s, and nothing changes', async (_what, content, codes) => {
    const d = await draftOf('policy', key.admin, content);
    const draftBefore = await raw(`/policy/${d.id}`);
    const versionsBefore = await raw(`/policy/${d.id}/versions`);
    // content edits in the publishing PUT roll back too
    const res = await call(stack, 'PUT', `/policy/${d.id}`, {
      key: key.admin,
      body: { status: 'published', description: 'should not stick' },
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('cannot_publish');
    expect(res.body.errors.map((e: { code: string }) => e.code)).toEqual(codes);
    for (const e of res.body.errors) expect(e.message).toEqual(expect.any(String));
    expect(await raw(`/policy/${d.id}`)).toEqual(draftBefore);
    expect(await raw(`/policy/${d.id}/versions`)).toEqual(versionsBefore);
  });

  it('400 at save for a flow draft whose node names an unknown policy, naming the node', async () => {
    const missing = randomUUID();
    const res = await call(stack, 'POST', '/flow', { key: key.admin, body: flowBody({ definition: flowDefinition(missing), tests: [] }) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      {
        code: 'unknown_policy',
        message: `node \`check\`: policy base \`${missing}\` does not exist`,
        path: 'definition.nodes.check.baseId',
      },
    ]);
    const d = await draftOf('flow', key.admin, { tests: [] });
    const before = await raw(`/flow/${d.id}`);
    const edit = await call(stack, 'PUT', `/flow/${d.id}`, {
      key: key.admin,
      body: { status: 'draft', definition: flowDefinition(missing) },
    });
    expect(edit.status).toBe(400);
    expect(await raw(`/flow/${d.id}`)).toEqual(before);
  });

  it('422 for a flow whose node policy was deleted after the draft was saved, and nothing changes', async () => {
    const p = await publishedOf('policy');
    const d = await draftOf('flow', key.admin, { definition: flowDefinition(p.baseId), tests: [] });
    await ok(204, 'DELETE', `/policy/${p.id}`, key.admin);
    const before = await raw(`/flow/${d.id}`);
    const res = await call(stack, 'PUT', `/flow/${d.id}`, { key: key.admin, body: { status: 'published' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { code: string }) => e.code)).toEqual(['unknown_policy']);
    expect(await raw(`/flow/${d.id}`)).toEqual(before);
  });

  it('400 for a flow definition that is not a valid DAG', async () => {
    const res = await call(stack, 'POST', '/flow', {
      key: key.admin,
      body: {
        name: 'cyclic',
        definition: { start: 'a', nodes: { a: { type: 'policy', baseId: sharedPolicy.baseId, onTrue: 'a', onFalse: 'a' } } },
      },
    });
    expect(res.status).toBe(400);
  });
});

describe('soft delete', () => {
  it('hides the whole base: 404 by every record id and version id, gone from lists and group lists, membership kept, second DELETE 404', async () => {
    const r = await redraftOf('policy');
    const g = await groupOf(key.admin);
    await ok(201, 'POST', `/group/${g}/member`, key.admin, { memberId: r.baseId, memberType: 'policy' });
    expect(baseIds(await ok(200, 'GET', `/group/${g}/policies`, key.viewer))).toEqual([r.baseId]);
    const name = (await ok(200, 'GET', `/policy/${r.id}`, key.admin)).name as string;
    expect(baseIds(await ok(200, 'GET', `/policies?q=${encodeURIComponent(name)}`, key.viewer))).toEqual([r.baseId]);

    // deleting by the draft's id deletes the whole base, the version included
    expect((await call(stack, 'DELETE', `/policy/${r.id}`, { key: key.admin })).status).toBe(204);
    for (const id of [r.id, r.versionId]) {
      for (const url of [`/policy/${id}`, `/policy/${id}/versions`])
        expect((await call(stack, 'GET', url, { key: key.admin })).status, url).toBe(404);
      expect((await call(stack, 'DELETE', `/policy/${id}`, { key: key.admin })).status).toBe(404);
    }
    expect(baseIds(await ok(200, 'GET', `/policies?q=${encodeURIComponent(name)}`, key.admin))).toEqual([]);
    expect(baseIds(await ok(200, 'GET', `/group/${g}/policies`, key.admin))).toEqual([]);

    // the membership record survives, hidden (checked in the registry's own tables)
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      const rows = await db.query('select member_type from registry_group_members where group_id = $1 and base_id = $2', [g, r.baseId]);
      expect(rows.rows).toEqual([{ member_type: 'policy' }]);
    } finally {
      await db.end();
    }
  });

  it('works the same for flows', async () => {
    const v = await publishedOf('flow');
    const g = await groupOf(key.admin);
    await ok(201, 'POST', `/group/${g}/member`, key.admin, { memberId: v.baseId, memberType: 'flow' });
    await ok(204, 'DELETE', `/flow/${v.id}`, key.admin);
    expect((await call(stack, 'GET', `/flow/${v.id}`, { key: key.admin })).status).toBe(404);
    expect(baseIds(await ok(200, 'GET', `/group/${g}/flows`, key.admin))).toEqual([]);
    expect((await call(stack, 'DELETE', `/flow/${v.id}`, { key: key.admin })).status).toBe(404);
  });

  it('deleting a group removes its memberships but not the members', async () => {
    const p = await publishedOf('policy');
    const g = await groupOf(key.editor);
    await ok(201, 'POST', `/group/${g}/member`, key.editor, { memberId: p.baseId, memberType: 'policy' });
    expect(
      (await call(stack, 'POST', `/group/${g}/member`, { key: key.editor, body: { memberId: p.baseId, memberType: 'policy' } })).status,
    ).toBe(409);
    await ok(204, 'DELETE', `/group/${g}`, key.editor);
    expect((await call(stack, 'GET', `/group/${g}`, { key: key.editor })).status).toBe(404);
    expect((await call(stack, 'GET', `/group/${g}/policies`, { key: key.editor })).status).toBe(404);
    await ok(200, 'GET', `/policy/${p.id}`, key.editor);
  });
});

describe('governance approval on (the governance service)', () => {
  it('a publish becomes a review request (202); approve and publish make the version; nothing is published before', async () => {
    const d = await draftOf('policy', key.editor);
    const versions = async () =>
      ((await ok(200, 'GET', `/policy/${d.id}/versions`, key.admin)) as { items: Array<{ status: string }> }).items.filter(
        (r) => r.status === 'published',
      );
    const versionsBefore = await versions();
    await ok(200, 'PUT', '/org/settings', key.admin, { governanceApproval: true });
    try {
      expect((await call(stack, 'PUT', `/policy/${d.id}`, { key: key.viewer, body: { status: 'published' } })).status).toBe(403);
      const submitted = await call(stack, 'PUT', `/policy/${d.id}`, {
        key: key.editor,
        body: { status: 'published', name: 'renamed on the way' },
      });
      expect(submitted.status).toBe(202);
      expect(submitted.body).toMatchObject({ policyId: d.id, state: 'pending_approval', requestedBy: 'eddie', stale: false });
      expect(await versions()).toEqual(versionsBefore);
      expect((await call(stack, 'GET', `/policy/${d.id}`, { key: key.viewer })).body).toMatchObject({
        name: 'renamed on the way',
        review: { state: 'pending_approval' },
      });
      const approved = await call(stack, 'POST', `/policy/${d.id}/review/approve`, {
        key: key.publisher,
        headers: { 'content-type': 'application/json' },
      });
      expect(approved.status).toBe(200);
      const published = await call(stack, 'POST', `/policy/${d.id}/review/publish`, { key: key.admin });
      expect(published.status).toBe(201);
      expect(published.body).toMatchObject({
        policyId: d.id,
        status: 'published',
        name: 'renamed on the way',
        review: { state: 'published' },
      });
      // org B is not governed
      const b = await draftOf('policy', key.orgB);
      await ok(201, 'PUT', `/policy/${b.id}`, key.orgB, { status: 'published' });
    } finally {
      await ok(200, 'PUT', '/org/settings', key.admin, { governanceApproval: false });
    }
  });
});

describe('the governance service stopped', () => {
  it('review endpoints answer 503, the rest of the API works, and reviews work again once it is back', async () => {
    const d = await draftOf('policy', key.editor);
    await stack.stopService('governance');
    try {
      const down = await call(stack, 'GET', `/policy/${d.id}/review`, { key: key.viewer });
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ code: 'dependency_unavailable' });
      expect((await call(stack, 'POST', `/policy/${d.id}/review/approve`, { key: key.publisher })).status).toBe(503);
      const record = await ok(200, 'GET', `/policy/${d.id}`, key.viewer);
      expect(record).not.toHaveProperty('review');
      await ok(200, 'PUT', `/policy/${d.id}`, key.editor, { status: 'draft', description: 'edited while governance is down' });
      await ok(200, 'GET', '/policies', key.editor);
    } finally {
      await stack.startService('governance');
    }
    expect(await ok(200, 'GET', `/policy/${d.id}/review`, key.viewer)).toMatchObject({ state: 'draft', requestId: null });
    expect(await ok(200, 'GET', `/policy/${d.id}`, key.viewer)).toMatchObject({ review: { state: 'draft' } });
  });
});

describe('events', () => {
  /** Events of the stack's stream on `subject`, read with a fresh consumer. */
  async function streamEvents(subject: string): Promise<Array<{ msgId: string | undefined; event: any }>> {
    const stream = eventStreamName(stack.env.NATS_SUBJECT_PREFIX);
    const jsm = await jetstreamManager(nc);
    const name = `e2e${randomBytes(4).toString('hex')}`;
    await jsm.consumers.add(stream, {
      name,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subject,
      inactive_threshold: 30_000_000_000,
    });
    try {
      const consumer = await jetstream(nc).consumers.get(stream, name);
      const pending = (await consumer.info()).num_pending;
      const out: Array<{ msgId: string | undefined; event: any }> = [];
      if (pending === 0) return out;
      for await (const m of await consumer.fetch({ max_messages: pending, expires: 2000 })) {
        out.push({ msgId: m.headers?.get('Nats-Msg-Id'), event: m.json() });
        if (out.length === pending) break;
      }
      return out;
    } finally {
      await jsm.consumers.delete(stream, name);
    }
  }

  it('a role assignment puts an `assigned` event on the JetStream stream', async () => {
    const userId = `new-${randomBytes(3).toString('hex')}`;
    await ok(201, 'PUT', `/users/${userId}`, key.admin, { role: 'editor' });
    await ok(200, 'PUT', `/users/${userId}`, key.admin, { role: 'viewer' });
    const subject = `${stack.env.NATS_SUBJECT_PREFIX}.events.acme.assigned`;
    const mine = await eventually(async () => {
      const found = (await streamEvents(subject)).filter((e) => e.event.resource?.type === 'user' && e.event.resource.id === userId);
      expect(found).toHaveLength(2);
      return found;
    });
    expect(mine.map((e) => e.event.details)).toEqual([
      { role: 'editor', added: true },
      { role: 'viewer', added: false },
    ]);
    for (const e of mine) {
      expect(e.event).toMatchObject({
        orgId: 'acme',
        kind: 'assigned',
        actor: { userId: 'admin' },
        resource: { type: 'user', id: userId },
      });
      expect(e.msgId).toBe(e.event.eventId);
    }
  });
});
