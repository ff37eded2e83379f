/** `GET /audit` and `GET /audit/export` against a real audit service (its built `dist/main.js`) over the real NATS. */

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import { eventSubject, type ArbiterEvent, type EventKind } from '@arbiter/contracts';
import { connectBus, createLogger, ensureEventStream, type Bus } from '@arbiter/service-kit';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { dropDatabases, eventually, testServers } from '@arbiter/test-kit';
import { NatsAuditClient } from '../src/clients/audit-client.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { memberKey, newOrg, problem, signToken, startGateway, withKey, withToken } from './support/gateway.js';

const { nats: NATS_URL, postgres: PG_URL } = testServers();
const AUDIT_MAIN = path.join(path.dirname(createRequire(import.meta.url).resolve('@arbiter/audit/package.json')), 'dist/main.js');

const id = randomBytes(6).toString('hex');
const prefix = `test_gwaudit_${id}`;
const auditDb = `arbiter_audit_gw_${id}`;
let db: TestDatabase;
let redis: TestRedis;
let bus: Bus;
let app: FastifyInstance;
let child: ChildProcess | undefined;
let adminKey: string;
const keys: Record<string, string> = {};
const events: ArbiterEvent[] = [];

function startAudit(): void {
  const u = new URL(PG_URL);
  u.pathname = `/${auditDb}`;
  child = spawn(process.execPath, [AUDIT_MAIN], {
    env: { ...process.env, NATS_URL, NATS_SUBJECT_PREFIX: prefix, AUDIT_DATABASE_URL: u.toString(), LOG_LEVEL: 'silent', OPS_PORT: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function stopAudit(): Promise<void> {
  const c = child;
  child = undefined;
  if (!c || c.exitCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await exited;
}

// Events of this month: the audit service stores events of last month to two months ahead, and
// parks others rather than make a partition for a date it was sent.
const MONTH_START = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1);

const ev = (kind: EventKind, orgId: string, i: number): ArbiterEvent => ({
  eventId: randomUUID(),
  orgId,
  kind,
  at: new Date(MONTH_START + i * 60_000).toISOString(),
  actor: { userId: i % 2 ? 'bob' : 'alice' },
  resource: { type: 'policy', id: `rec-${i}`, baseId: `base-${i % 3}` },
  details: {},
});

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  bus = await connectBus({ url: NATS_URL, prefix, name: 'gateway-audit-test', logger: createLogger({ service: 't', level: 'silent' }) });
  await ensureEventStream(bus.nc, prefix);
  app = await startGateway(db, redis, { audit: new NatsAuditClient(bus, 5000) });
  adminKey = await newOrg(db, 'acme');
  await newOrg(db, 'other', 'other-admin');
  for (const role of ['viewer', 'editor', 'publisher', 'auditor'] as const) {
    keys[role] = await memberKey(app, adminKey, 'acme', `${role}-user`, role, role === 'auditor' ? ['view', 'audit'] : ['view']);
  }
  const js = jetstream(bus.nc);
  for (let i = 0; i < 12; i++) events.push(ev(i % 2 ? 'edited' : 'published', 'acme', i));
  events.push(ev('deleted', 'other', 99));
  for (const e of events) await js.publish(eventSubject(prefix, e.orgId, e.kind), JSON.stringify(e), { msgID: e.eventId });
  startAudit();
  // The audit service catches up with the stream.
  await eventually(
    async () => {
      const res = await app.inject({ url: '/audit?limit=200', headers: withKey(adminKey) });
      expect([res.statusCode, res.statusCode === 200 ? res.json().items.length : res.body.slice(0, 200)]).toEqual([200, 12]);
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}, 60_000);

afterAll(async () => {
  await stopAudit();
  await app?.close();
  const jsm = await jetstreamManager(bus.nc);
  await jsm.streams.delete(`${prefix.toUpperCase()}_EVENTS`).catch(() => undefined);
  await bus?.close();
  await redis?.cleanup();
  await db?.drop();
  await dropDatabases(PG_URL, [auditDb]);
});

describe('GET /audit', () => {
  it('gives admins and auditors their org, newest first, with cursor pages', async () => {
    const newest = events.filter((e) => e.orgId === 'acme').sort((a, b) => b.at.localeCompare(a.at));
    const first = await app.inject({ url: '/audit?limit=5', headers: withKey(keys.auditor!) });
    expect(first.statusCode).toBe(200);
    expect(first.json().items.map((e: ArbiterEvent) => e.eventId)).toEqual(newest.slice(0, 5).map((e) => e.eventId));
    const second = await app.inject({ url: `/audit?limit=5&cursor=${first.json().nextCursor}`, headers: withKey(keys.auditor!) });
    expect(second.json().items.map((e: ArbiterEvent) => e.eventId)).toEqual(newest.slice(5, 10).map((e) => e.eventId));
    const bearer = await signToken({ sub: 'admin', org: 'acme' });
    expect((await app.inject({ url: '/audit?limit=1', headers: withToken(bearer) })).statusCode).toBe(200);
  });

  it('filters by repeated kind, actor, base id and time range', async () => {
    const get = async (qs: string) =>
      (await app.inject({ url: `/audit?limit=200&${qs}`, headers: withKey(adminKey) })).json().items as ArbiterEvent[];
    expect((await get('kind=edited')).every((e) => e.kind === 'edited')).toBe(true);
    expect(await get('kind=edited&kind=published')).toHaveLength(12);
    expect((await get('actor=bob')).map((e) => e.actor.userId)).toEqual(Array(6).fill('bob'));
    expect((await get('baseId=base-1')).every((e) => e.resource.baseId === 'base-1')).toBe(true);
    expect(
      await get(`from=${encodeURIComponent(ev('edited', 'acme', 3).at)}&to=${encodeURIComponent(ev('edited', 'acme', 6).at)}`),
    ).toHaveLength(3);
    expect(await get('resourceType=flow')).toEqual([]);
  });

  it('refuses viewers, editors and publishers (403), and no credentials (401)', async () => {
    for (const role of ['viewer', 'editor', 'publisher']) {
      const res = await app.inject({ url: '/audit', headers: withKey(keys[role]!) });
      expect(problem(res)).toMatchObject({ status: 403, code: 'forbidden' });
    }
    expect(problem(await app.inject({ url: '/audit' }))).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(problem(await app.inject({ url: '/audit/export' }))).toMatchObject({ status: 401 });
  });

  it('shows another org only its own events', async () => {
    const otherKey = await signToken({ sub: 'other-admin', org: 'other' });
    const res = await app.inject({ url: '/audit', headers: withToken(otherKey) });
    expect(res.json().items.map((e: ArbiterEvent) => e.orgId)).toEqual(['other']);
  });

  it('answers 400 for a bad filter or cursor', async () => {
    for (const qs of ['kind=exploded', 'limit=0', 'limit=201', 'from=yesterday', 'cursor=forged', 'resourceType=planet']) {
      expect(problem(await app.inject({ url: `/audit?${qs}`, headers: withKey(adminKey) })).status, qs).toBe(400);
    }
  });

  it('exports the filter as NDJSON, every page', async () => {
    const res = await app.inject({ url: '/audit/export?kind=edited', headers: withKey(keys.auditor!) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ArbiterEvent);
    expect(lines).toHaveLength(6);
    expect(lines.every((e) => e.kind === 'edited' && e.orgId === 'acme')).toBe(true);
    expect(problem(await app.inject({ url: '/audit/export', headers: withKey(keys.viewer!) })).status).toBe(403);
  });

  it('lists both routes in /openapi.json, which stays a valid document', async () => {
    const doc = (await app.inject({ url: '/openapi.json' })).json();
    expect(doc.paths['/audit'].get).toBeDefined();
    expect(doc.paths['/audit/export'].get).toBeDefined();
    const validation = await new Validator().validate(doc);
    expect(validation.valid, JSON.stringify(validation.errors)).toBe(true);
  });

  it('answers 503 when no audit service runs, and other routes do not care', async () => {
    await stopAudit();
    expect(problem(await app.inject({ url: '/audit', headers: withKey(adminKey) }))).toMatchObject({ status: 503 });
    expect(problem(await app.inject({ url: '/audit/export', headers: withKey(adminKey) }))).toMatchObject({ status: 503 });
    expect((await app.inject({ url: '/me', headers: withKey(adminKey) })).statusCode).toBe(200);
  });
});
