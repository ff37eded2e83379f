/**
 * A poison message on the events stream: one the audit store can never write must not
 * stop the trail of every org. The gateway now refuses the SDK report that used to make one (a
 * window dated in the year 1), so the poison is put on the bus directly: an event of the year 1
 * (no partition may be made for it) and one whose details hold a text PostgreSQL cannot store.
 * Ordinary events of another org, published after them, are stored within seconds; the poison is
 * parked on the dead-letter stream after AUDIT_MAX_DELIVERIES and counted on /metrics, and no
 * partition is made for its month.
 * `npm run test:faults` runs it with the fault suite; `npm test` runs it with the other end-to-end suites.
 */

import { randomUUID } from 'node:crypto';
import { deadEventStreamName, eventSubject, type ArbiterEvent } from '@arbiter/contracts';
import { companionDatabaseUrl, natsServers } from '@arbiter/service-kit';
import { eventually } from '@arbiter/test-kit';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';

const MAX_DELIVERIES = 3;
const RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';

let stack: Stack;
let nc: NatsConnection;
let db: pg.Client;

beforeAll(async () => {
  stack = await startStack({
    services: ['registry', 'audit', 'gateway'],
    env: { LOG_LEVEL: 'warn', AUDIT_MAX_DELIVERIES: String(MAX_DELIVERIES) },
  });
  nc = await connect({ servers: natsServers(stack.env.NATS_URL!) });
  db = new pg.Client({ connectionString: companionDatabaseUrl(stack.env.DATABASE_URL!, 'audit') });
  await db.connect();
}, 120_000);

afterAll(async () => {
  await db?.end().catch(() => undefined);
  await nc?.close().catch(() => undefined);
  await stack?.stop();
});

/** A counter of the audit service's /metrics. */
async function auditCounter(name: string): Promise<number> {
  const text = await (await fetch(`${stack.opsUrl('audit')}/metrics`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

function poison(over: Partial<ArbiterEvent>): ArbiterEvent {
  return {
    eventId: randomUUID(),
    orgId: 'poison-org',
    kind: 'executed',
    at: new Date().toISOString(),
    actor: { userId: 'mallory', apiKeyId: randomUUID() },
    resource: { type: 'policy', id: randomUUID(), baseId: randomUUID() },
    details: { aggregated: true, count: 1 },
    ...over,
  };
}

describe('audit: a poison message on the events stream', () => {
  it('stores the events of another org within seconds, parks the poison on the dead-letter stream and counts it', async () => {
    const prefix = stack.env.NATS_SUBJECT_PREFIX!;
    // The door the issue found is shut: the gateway refuses a report window of the year 1.
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'Reported', rule: RULE } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { baseId, policyId } = created.body as { baseId: string; policyId: string };
    const report = await call(stack, 'POST', '/runnable/reports', {
      key: stack.adminKey,
      body: {
        reportId: randomUUID(),
        runs: [
          {
            kind: 'policy',
            recordId: policyId,
            baseId,
            version: null,
            count: 1,
            trueCount: 1,
            falseCount: 0,
            errorCount: 0,
            from: '0001-01-01T00:00:00Z',
            to: '0001-01-01T00:00:01Z',
          },
        ],
      },
    });
    expect(report.status, JSON.stringify(report.body)).toBe(400);
    expect(report.body.errors).toEqual([expect.objectContaining({ code: 'before_key_created', path: 'body.runs.0.from' })]);

    // So the poison goes on the bus itself.
    const js = jetstream(nc);
    const bad = [poison({ at: '0001-01-01T00:00:00.000Z' }), poison({ details: { note: 'nul \u0000 inside' } })];
    for (const e of bad) await js.publish(eventSubject(prefix, e.orgId, e.kind), JSON.stringify(e), { msgID: e.eventId });

    // Ordinary events of the stack's org, made after the poison: in the trail within seconds.
    const started = Date.now();
    const later = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'After the poison', rule: RULE } });
    expect(later.status, JSON.stringify(later.body)).toBe(201);
    const laterBase = (later.body as { baseId: string }).baseId;
    await eventually(
      async () => {
        const trail = await call(stack, 'GET', `/audit?baseId=${laterBase}`, { key: stack.adminKey });
        expect(trail.status).toBe(200);
        expect((trail.body.items as { kind: string }[]).map((e) => e.kind)).toContain('created');
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const storedInMs = Date.now() - started;
    expect(storedInMs).toBeLessThan(10_000);

    // The poison: parked after its last delivery, counted, nothing of it stored, no partition made for it.
    const jsm = await jetstreamManager(nc);
    const dead = deadEventStreamName(prefix);
    await eventually(
      async () => {
        const info = await jsm.streams.info(dead);
        expect(info.state.messages).toBe(bad.length);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const parked = await Promise.all(bad.map((_, i) => jsm.streams.getMessage(dead, { seq: i + 1 })));
    expect(parked.map((m) => (m!.json() as ArbiterEvent).eventId).sort()).toEqual(bad.map((e) => e.eventId).sort());
    for (const m of parked) expect(m!.header.get('Arbiter-Deliveries')).toBe(String(MAX_DELIVERIES));
    expect(await auditCounter('arbiter_audit_events_dead_lettered_total')).toBe(bad.length);
    const { rows } = await db.query<{ n: string }>(`select count(*) as n from audit_events where org_id = 'poison-org'`);
    expect(Number(rows[0]!.n)).toBe(0);
    const parts = await db.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
        where p.relname = 'audit_events'`,
    );
    expect(parts.rows.map((r) => r.name).filter((n) => /_p(0001|1901)\d\d$/.test(n))).toEqual([]);
    process.stdout.write(`\naudit poison: another org's event stored in ${storedInMs} ms; ${bad.length} poison messages parked\n`);
  });
});
