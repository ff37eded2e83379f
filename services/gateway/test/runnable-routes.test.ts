/**
 * Local evaluation's routes: `GET /runnable`, `GET /runnable/changes` (server-sent
 * events) and `POST /runnable/reports`, against a real registry in-process with its own database,
 * on a subject prefix of this file.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import { eventStreamName, type RunnableSnapshot } from '@arbiter/contracts';
import { RegistryConfig } from '@arbiter/registry/config';
import { startRegistry, type Registry } from '@arbiter/registry/service';
import { connectBus, createLogger, inProcessKit, type Bus } from '@arbiter/service-kit';
import { dropDatabases, eventually } from '@arbiter/test-kit';
import { jetstreamManager } from '@nats-io/jetstream';
import { NatsRegistryClient } from '../src/clients/registry-client.js';
import { NatsRunnableClient } from '../src/clients/runnable-client.js';
import { RunnableWatch } from '../src/clients/runnable-watch.js';
import { createTestDatabase, createTestRedis, REDIS_URL, type TestDatabase, type TestRedis } from './support/servers.js';
import { memberKey, newOrg, problem, signToken, startGateway, withKey, withToken } from './support/gateway.js';

const PG_URL = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';

function withDatabase(name: string): string {
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

const id = randomBytes(6).toString('hex');
const prefix = `test_gwrun_${id}`;
const logger = createLogger({ service: 'gateway-runnable-test', level: 'silent' });

let db: TestDatabase;
let redis: TestRedis;
let registry: Registry;
let bus: Bus;
let watch: RunnableWatch;
let app: FastifyInstance;
let baseUrl: string;
type Member = 'admin' | 'editor' | 'viewer' | 'editOnly' | 'stranger';
const keys = {} as Record<Member, string>;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  const registryConfig = RegistryConfig.parse({
    NATS_URL,
    REDIS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    DATABASE_URL: withDatabase(`arbiter_test_reg_${id}`),
    LOG_LEVEL: 'silent',
    DB_POOL_MAX: '3',
    REGISTRY_CHECK_TIMEOUT_MS: '10000',
  });
  registry = await startRegistry(inProcessKit('registry', registryConfig, { logger }));
  bus = await connectBus({ url: NATS_URL, prefix, name: 'gateway-runnable-test', logger });
  const client = new NatsRunnableClient(bus, 10_000);
  watch = new RunnableWatch(bus, client, 500);
  app = await startGateway(db, redis, { registry: new NatsRegistryClient(bus, 10_000), runnable: { client, watch, authRecheckMs: 200 } });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  keys.admin = await newOrg(db, 'acme');
  keys.editor = await memberKey(app, keys.admin, 'acme', 'eddie', 'editor', ['view', 'edit']);
  keys.viewer = await memberKey(app, keys.admin, 'acme', 'vic', 'viewer', ['view']);
  keys.editOnly = await memberKey(app, keys.admin, 'acme', 'edo', 'editor', ['edit']);
  keys.stranger = await newOrg(db, 'globex', 'stranger');
}, 60_000);

afterAll(async () => {
  await app?.close();
  watch?.close();
  await registry?.close();
  if (bus) {
    const jsm = await jetstreamManager(bus.nc);
    await jsm.streams.delete(eventStreamName(prefix)).catch(() => undefined);
    await bus.close();
  }
  await redis?.cleanup();
  await db?.drop();
  await dropDatabases(PG_URL, [`arbiter_test_reg_${id}`]);
});

type Who = Member | 'nobody';
const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, who: Who, payload?: object, extra: Record<string, string> = {}) =>
  app.inject({
    method,
    url,
    headers: who === 'nobody' ? extra : { ...withKey(keys[who]), ...extra },
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
  });
const ok = <T = Record<string, unknown>>(res: LightMyRequestResponse, status = 200): T => {
  expect(res.statusCode, res.body).toBe(status);
  return res.json<T>();
};
const createPolicy = async (name: string, who: Who = 'editor') =>
  ok<{ policyId: string; baseId: string }>(await call('POST', '/policy', who, { name, rule: RULE }), 201);
const publish = async (policyId: string) =>
  ok<{ policyId: string }>(await call('PUT', `/policy/${policyId}`, 'admin', { status: 'published' }), 201);
const snapshot = async (query: string, who: Who = 'viewer') => ok<RunnableSnapshot>(await call('GET', `/runnable?${query}`, who));

/** Reads server-sent events from `GET /runnable/changes` until `stop` says enough. */
async function readEvents(
  key: string,
  since: number,
  stop: (events: Array<{ event: string; data: unknown }>) => boolean,
): Promise<{ status: number; events: Array<{ event: string; data: unknown }>; ended: boolean }> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/runnable/changes?since=${since}&heartbeatMs=500`, {
    headers: withKey(key),
    signal: controller.signal,
  });
  const events: Array<{ event: string; data: unknown }> = [];
  if (res.status !== 200 || res.body === null) return { status: res.status, events, ended: true };
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = true;
  const reader = res.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) });
    }
    if (stop(events)) {
      ended = false;
      controller.abort();
      break;
    }
  }
  return { status: res.status, events, ended };
}

describe('GET /runnable', () => {
  it('answers the selection at the org revision, with an ETag that 304s until something changes', async () => {
    const d = await createPolicy('Runnable one');
    const first = await call('GET', `/runnable?bases=${d.baseId}`, 'viewer');
    const body = ok<RunnableSnapshot>(first);
    expect(body).toMatchObject({ full: true, removed: [], missing: [] });
    expect(body.bases).toEqual([
      {
        kind: 'policy',
        baseId: d.baseId,
        selected: true,
        current: { policyId: d.policyId, baseId: d.baseId, status: 'draft', version: null, rule: RULE, schema: null },
        pinned: [],
      },
    ]);
    const etag = first.headers.etag as string;
    expect(etag).toBe(`"r${body.revision}-${etag.split('-')[1]}`);
    const again = await call('GET', `/runnable?bases=${d.baseId}`, 'viewer', undefined, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    await publish(d.policyId);
    const changed = await call('GET', `/runnable?bases=${d.baseId}`, 'viewer', undefined, { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    const delta = await snapshot(`bases=${d.baseId}&since=${body.revision}`);
    expect(delta).toMatchObject({ full: false, bases: [{ baseId: d.baseId, current: { version: 1, status: 'published' } }] });
  });

  it('takes repeated or comma-separated bases; unknown, deleted and other-org ids are `missing`', async () => {
    const a = await createPolicy('Runnable a');
    const b = await createPolicy('Runnable b');
    const foreign = await createPolicy('Foreign', 'stranger');
    expect((await call('DELETE', `/policy/${b.policyId}`, 'admin')).statusCode).toBe(204);
    const unknown = randomUUID();
    const body = await snapshot(`bases=${a.baseId},${b.baseId}&bases=${foreign.baseId}&bases=${unknown}`);
    expect(body.bases.map((x) => x.baseId)).toEqual([a.baseId]);
    expect(body.missing).toEqual([b.baseId, foreign.baseId, unknown].sort());
  });

  it('a group of another org, or unknown, is 404; bad queries are 400', async () => {
    expect(problem(await call('GET', `/runnable?group=${randomUUID()}`, 'viewer'))).toMatchObject({ status: 404, code: 'not_found' });
    const group = ok<{ groupId: string }>(await call('POST', '/group', 'stranger', { name: 'theirs' }), 201);
    expect(problem(await call('GET', `/runnable?group=${group.groupId}`, 'viewer'))).toMatchObject({ status: 404 });
    for (const query of ['', 'bases=nope', 'all=yes', 'all=true&since=-1', 'extra=1', `bases=${Array(201).fill(randomUUID()).join(',')}`]) {
      expect(problem(await call('GET', `/runnable?${query}`, 'viewer')), query).toMatchObject({ status: 400 });
    }
  });

  it('needs an API key with `view`', async () => {
    expect(problem(await call('GET', '/runnable?all=true', 'nobody'))).toMatchObject({ status: 401, code: 'unauthenticated' });
    const token = await signToken({ sub: 'admin', org: 'acme' });
    expect(problem(await call('GET', '/runnable?all=true', 'nobody', undefined, withToken(token)))).toMatchObject({ status: 401 });
    expect(problem(await call('GET', '/runnable?all=true', 'editOnly'))).toMatchObject({ status: 403, code: 'forbidden' });
  });
});

describe('GET /runnable/changes', () => {
  it('announces the revision at once when the caller is behind, then each new one, with pings between', async () => {
    const start = (await snapshot('all=true')).revision;
    const d = await createPolicy('Streamed');
    const behind = await readEvents(keys.viewer, start, (events) => events.some((e) => e.event === 'revision'));
    expect(behind.status).toBe(200);
    expect(behind.events.find((e) => e.event === 'revision')?.data).toEqual({ revision: start + 1 });

    const now = start + 1;
    const streamed = readEvents(
      keys.viewer,
      now,
      (events) => events.some((e) => e.event === 'revision') && events.filter((e) => e.event === 'ping').length >= 2,
    );
    await eventually(async () => expect(watch.latest('acme')).toBe(now));
    await publish(d.policyId);
    const { events } = await streamed;
    expect(events.find((e) => e.event === 'revision')?.data).toEqual({ revision: now + 1 });
    expect(events.filter((e) => e.event === 'ping').at(-1)?.data).toEqual({ revision: now + 1 });
  });

  it('ends with an `error` event when its key is revoked', async () => {
    const key = await memberKey(app, keys.admin, 'acme', 'rita', 'viewer', ['view']);
    const listed = ok<{ items: Array<{ apiKeyId: string; owner: string }> }>(await call('GET', '/apikeys?all=true&limit=200', 'admin'));
    const apiKeyId = listed.items.find((k) => k.owner === 'rita')!.apiKeyId;
    const stream = readEvents(key, 0, () => false);
    await eventually(async () => expect(watch.latest('acme')).toBeDefined());
    expect((await call('DELETE', `/apikeys/${apiKeyId}`, 'admin')).statusCode).toBe(204);
    const { events, ended } = await stream;
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { status: 401, code: 'unauthenticated' } });
  });

  it('refuses what GET /runnable refuses', async () => {
    expect((await call('GET', '/runnable/changes?since=0', 'nobody')).statusCode).toBe(401);
    expect((await call('GET', '/runnable/changes?since=0', 'editOnly')).statusCode).toBe(403);
    expect((await call('GET', '/runnable/changes', 'viewer')).statusCode).toBe(400);
    expect((await call('GET', '/runnable/changes?since=x', 'viewer')).statusCode).toBe(400);
  });
});

describe('POST /runnable/reports', () => {
  const runOf = (policyId: string, baseId: string) => {
    const now = new Date().toISOString();
    return {
      kind: 'policy',
      recordId: policyId,
      baseId,
      version: null,
      count: 2,
      trueCount: 1,
      falseCount: 1,
      errorCount: 0,
      from: now,
      to: now,
    };
  };

  it('accepts counts of the caller org records; other-org and unknown records are ignored', async () => {
    const d = await createPolicy('Reported');
    const foreign = await createPolicy('Foreign reported', 'stranger');
    const unknown = randomUUID();
    const body = {
      reportId: randomUUID(),
      runs: [runOf(d.policyId, d.baseId), runOf(foreign.policyId, foreign.baseId), runOf(unknown, d.baseId)],
    };
    expect(ok(await call('POST', '/runnable/reports', 'viewer', body))).toEqual({ accepted: 1, ignored: [foreign.policyId, unknown] });
  });

  it('refuses malformed bodies, callers without a key and keys without `view`', async () => {
    const d = await createPolicy('Reported twice');
    const good = { reportId: randomUUID(), runs: [runOf(d.policyId, d.baseId)] };
    expect(problem(await call('POST', '/runnable/reports', 'viewer', { ...good, extra: 1 }))).toMatchObject({ status: 400 });
    expect(problem(await call('POST', '/runnable/reports', 'viewer', { ...good, runs: [] }))).toMatchObject({ status: 400 });
    expect(problem(await call('POST', '/runnable/reports', 'viewer', { ...good, runs: [{ ...good.runs[0], count: 3 }] }))).toMatchObject({
      status: 400,
    });
    expect(problem(await call('POST', '/runnable/reports', 'nobody', good))).toMatchObject({ status: 401 });
    expect(problem(await call('POST', '/runnable/reports', 'editOnly', good))).toMatchObject({ status: 403 });
  });
});

describe('POST /runnable/reports: what a report may claim', () => {
  const HOUR = 3_600_000;
  const run = (policyId: string, baseId: string, from: number, to: number, count = 1) => ({
    kind: 'policy',
    recordId: policyId,
    baseId,
    version: null,
    count,
    trueCount: count,
    falseCount: 0,
    errorCount: 0,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
  });
  const refusal = async (runs: object[]) => {
    const res = await call('POST', '/runnable/reports', 'viewer', { reportId: randomUUID(), runs });
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json<{ code: string; errors: { code: string; path: string }[] }>();
    expect(body.code).toBe('validation_failed');
    return body.errors.map((e) => `${e.code} ${e.path}`);
  };

  it('refuses a window before the key was made (the year 1, before 1970, an hour early) or in the future, and a count its window cannot hold', async () => {
    const d = await createPolicy('Bounded report');
    const now = Date.now();
    expect(await refusal([run(d.policyId, d.baseId, Date.parse('0001-01-01T00:00:00Z'), now)])).toEqual([
      'before_key_created body.runs.0.from',
    ]);
    expect(await refusal([run(d.policyId, d.baseId, Date.parse('1969-12-01T00:00:00Z'), Date.parse('1969-12-02T00:00:00Z'))])).toEqual([
      'before_key_created body.runs.0.from',
    ]);
    expect(await refusal([run(d.policyId, d.baseId, now - HOUR, now)])).toEqual(['before_key_created body.runs.0.from']);
    expect(await refusal([run(d.policyId, d.baseId, now, now + HOUR)])).toEqual(['in_future body.runs.0.to']);
    // 10 seconds at the default 100,000 a second: 1,000,000 at most.
    expect(await refusal([run(d.policyId, d.baseId, now - 10_000, now, 1_000_001)])).toEqual(['too_many_runs body.runs.0.count']);
    expect(await refusal([run(d.policyId, d.baseId, now - 10_000, now, 1e12)])).toEqual([
      'too_big body.runs.0.count',
      'too_big body.runs.0.trueCount',
    ]);
    // Within every bound: accepted, the clock skew allowed on both ends.
    const fine = [run(d.policyId, d.baseId, now - 10_000, now + 60_000, 1_000_000)];
    expect(ok(await call('POST', '/runnable/reports', 'viewer', { reportId: randomUUID(), runs: fine }))).toEqual({
      accepted: 1,
      ignored: [],
    });
  });
});

describe('OpenAPI', () => {
  it('documents the three routes in a valid document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/runnable', '/runnable/changes', '/runnable/reports']));
    expect((await new Validator().validate(doc)).errors ?? []).toEqual([]);
  });
});
