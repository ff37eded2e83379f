/**
 * Decision ingest under kill -9: once a decision record is in the execution service's
 * outbox it is never lost and never stored twice, even when the audit service is killed (SIGKILL)
 * in the middle of ingesting a backlog of them.
 *
 * 2,000 runs of a stored policy (the base's per-second cap raised through its settings) are
 * recorded while the audit service is down, so their records wait in JetStream; the audit service
 * is started, killed -9 once part of the backlog is stored, and started again. Every `decided`
 * event of the base in the stream must end up in `decisions` exactly once (counted by decisionId).
 * `npm run test:faults` runs it with the fault suite; `npm test` runs it with the other end-to-end suites.
 */

import { ArbiterEvent, eventStreamName } from '@arbiter/contracts';
import { companionDatabaseUrl, natsServers } from '@arbiter/service-kit';
import { eventually } from '@arbiter/test-kit';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';

const RULE = 'An **applicant** is approved if the __score__ of the **applicant** is at least 600.';
const RUNS = 2000;
const BATCH = 500;

let stack: Stack;
let db: pg.Client;

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'gateway'],
    env: {
      LOG_LEVEL: 'warn',
      DECISIONS_FLUSH_MS: '50',
      DECISIONS_SETTINGS_TTL_MS: '200',
      // The runs below are recorded while the audit service is down, with the settings read before;
      // however slow the machine, they must not pass the age at which settings held stop being used.
      DECISIONS_SETTINGS_MAX_AGE_MS: '600000',
      // Small batches make the backlog's ingest a few hundred transactions long, so the kill lands in
      // it; a short ack wait has the batch in flight at the kill redelivered soon after the restart.
      AUDIT_BATCH_SIZE: '10',
      AUDIT_ACK_WAIT_MS: '2000',
    },
  });
  db = new pg.Client({ connectionString: companionDatabaseUrl(stack.env.DATABASE_URL!, 'audit') });
  await db.connect();
}, 120_000);

afterAll(async () => {
  await db?.end().catch(() => undefined);
  await stack?.stop();
});

/** decisionId → rows of the base in the audit service's `decisions` table. */
async function stored(baseId: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ id: string; n: string }>(
    'select decision_id::text as id, count(*) as n from decisions where base_id = $1 group by decision_id',
    [baseId],
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}

/** decisionId → `decided` events of the base in the stack's events stream. */
async function inStream(baseId: string): Promise<Map<string, number>> {
  const nc = await connect({ servers: natsServers(stack.env.NATS_URL!) });
  const seen = new Map<string, number>();
  try {
    const consumer = await jetstream(nc).consumers.get(eventStreamName(stack.env.NATS_SUBJECT_PREFIX!));
    const messages = await consumer.consume();
    for await (const m of messages) {
      const event = ArbiterEvent.parse(m.json());
      if (event.kind === 'decided' && event.resource.baseId === baseId) seen.set(event.eventId, (seen.get(event.eventId) ?? 0) + 1);
      if (m.info.pending === 0) break;
    }
  } finally {
    await nc.close();
  }
  return seen;
}

/** A counter of the execution service's /metrics, summed over its labels. */
async function execCounter(name: string): Promise<number> {
  const text = await (await fetch(`${stack.opsUrl('execution')}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

describe('decision ingest: audit service killed -9 mid-ingest', () => {
  it('stores every decision of the outbox exactly once: 0 lost, 0 duplicated', async () => {
    const key = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', { key, body: { name: 'Ingest', rule: RULE } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { baseId, policyId } = created.body as { baseId: string; policyId: string };
    expect((await call(stack, 'PUT', `/policy/${policyId}`, { key, body: { status: 'published' } })).status).toBe(201);
    const settings = await call(stack, 'PUT', `/decisions/settings/${baseId}`, { key, body: { perSecond: 100_000 } });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);

    // The raised cap reaches the execution service within DECISIONS_SETTINGS_TTL_MS: probe with
    // batches of 60 (past the default 50 a second) ending in an error (always recorded, and stored
    // after the others of its batch) until one is recorded whole.
    const probe = [...Array.from({ length: 60 }, (_, i) => ({ applicant: { score: i } })), { applicant: {} }];
    let probed = 0;
    for (;;) {
      const storedBefore = (await stored(baseId)).size;
      const res = await call(stack, 'POST', `/run/policy/${baseId}/batch`, { key, body: { items: probe } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      probed++;
      const storedAfter = await eventually(
        async () => {
          const { rows } = await db.query<{ n: string }>(
            'select count(*) as n from decisions where base_id = $1 and error_code is not null',
            [baseId],
          );
          if (Number(rows[0]!.n) !== probed) throw new Error('the probe is not stored yet');
          return (await stored(baseId)).size;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      if (storedAfter - storedBefore === probe.length) break;
      expect(probed, 'the raised cap never reached the execution service').toBeLessThan(50);
    }
    const before = (await stored(baseId)).size;

    // The audit service goes away; the runs are answered and their records wait in JetStream.
    await stack.killService('audit');
    for (let i = 0; i < RUNS; i += BATCH) {
      const items = Array.from({ length: BATCH }, (_, k) => ({ applicant: { score: 500 + ((i + k) % 300) } }));
      const res = await call(stack, 'POST', `/run/policy/${baseId}/batch`, { key, body: { items } });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    }
    const expected = before + RUNS;
    const streamed = await eventually(
      async () => {
        const seen = await inStream(baseId);
        if (seen.size !== expected) throw new Error(`${seen.size} of ${expected} decided events in the stream`);
        return seen;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );

    // Started again, it ingests the backlog: killed -9 once a quarter of it is stored.
    const starting = stack.startService('audit').catch(() => 'killed before it was ready');
    const atKill = await eventually(
      async () => {
        const n = (await stored(baseId)).size;
        if (n - before < RUNS / 4) throw new Error(`${n - before} of the backlog stored`);
        return n;
      },
      { timeoutMs: 60_000, intervalMs: 5 },
    );
    await stack.killService('audit');
    await starting;
    const afterKill = (await stored(baseId)).size;
    expect(atKill, 'the kill must land while the backlog is being stored').toBeLessThan(expected);
    expect(afterKill).toBeLessThan(expected);

    await stack.startService('audit');
    const rows = await eventually(
      async () => {
        const got = await stored(baseId);
        if (got.size < expected) throw new Error(`${got.size} of ${expected} stored`);
        return got;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    const lost = [...streamed.keys()].filter((id) => !rows.has(id)).length;
    const duplicated = [...rows.values()].filter((n) => n > 1).length;
    const unexpected = [...rows.keys()].filter((id) => !streamed.has(id)).length;
    process.stdout.write(
      `\ndecision ingest under kill -9: ${expected} decisions in the outbox (${RUNS} runs + ${before} probes); ` +
        `${afterKill - before} of the backlog stored when the audit service was killed; after the restart ` +
        `${rows.size} stored, ${lost} lost, ${duplicated} duplicated\n`,
    );
    expect({ lost, duplicated, unexpected, stored: rows.size }).toEqual({ lost: 0, duplicated: 0, unexpected: 0, stored: expected });
    // Every record left the execution service through the outbox: none was dropped on the way there.
    expect(await execCounter('arbiter_decisions_dropped_total')).toBe(0);
    expect(await execCounter('arbiter_decisions_recorded_total')).toBe(expected);
  }, 300_000);
});
