/**
 * `npm run bench:audit`: the audit service (a built `dist/main.js` process in a full stack) measured
 * against baselines taken in the same run:
 *
 * 1. ingest: the same events written by a raw batched `INSERT … SELECT FROM unnest(…)` (500-row
 *    batches, the service's own SQL, same table and indexes) and by the consumer draining them from
 *    JetStream (acked after each commit); ratio consumer / raw (target >= 50 %);
 * 2. burst: events published as fast as the stack can while the service runs, then the time from
 *    the last publish ack until the lag (`arbiter_audit_consumer_lag`) and the row count settle (target <= 2 s);
 * 3. `GET /audit` p50/p95 over 1,000,000 stored events (seeded with generate_series) for filtered
 *    first pages and deep pages (target p95 <= 50 ms);
 * 4. `POST /run/policy/{baseId}` throughput with the audit service stopped and running, alternating
 *    rounds (target >= 95 %).
 * The machine is shared: figures are noisy, compare the ratios of one run.
 */

import { randomUUID } from 'node:crypto';
import { eventSubject, PolicyRecord, PolicyUpdateReply, RegistrySubject, type ArbiterEvent, type Principal } from '@arbiter/contracts';
import { companionDatabaseUrl, connectBus, createLogger } from '@arbiter/service-kit';
import { jetstream } from '@nats-io/jetstream';
import knex from 'knex';
import { insertEvents } from '../../services/audit/src/repositories/events.js';
import { createPartition, monthOf, addMonths } from '../../services/audit/src/repositories/partitions.js';
import { startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import { BENCH_STACK_ENV, combineRounds, DURATION_S, formatRow, measure, metricSum, runsOn, type Measured } from '../load.js';

const INGEST_EVENTS = Number(process.env.BENCH_AUDIT_EVENTS ?? 100_000);
const BURST_EVENTS = Number(process.env.BENCH_AUDIT_BURST ?? 20_000);
const SEED_ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 1_000_000);
const QUERIES = Number(process.env.BENCH_AUDIT_QUERIES ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const BATCH = 500;
const KINDS = ['created', 'edited', 'published', 'executed', 'deleted'] as const;

function events(n: number, orgId: string): ArbiterEvent[] {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => ({
    eventId: randomUUID(),
    orgId,
    kind: KINDS[i % KINDS.length],
    at: new Date(now - (n - i)).toISOString(),
    actor: { userId: `user-${i % 50}`, apiKeyId: randomUUID() },
    resource: { type: 'policy' as const, id: randomUUID(), baseId: `base-${i % 1000}` },
    details: i % KINDS.length === 3 ? { aggregated: true, count: 1 + (i % 7), trueCount: 1, falseCount: 0, errorCount: 0 } : { name: 'x' },
  }));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main(): Promise<void> {
  // A generous task deadline only so the execution service's warm-up survives a busy shared machine.
  const stack = await startStack({
    services: ['execution', 'registry', 'audit', 'gateway'],
    env: { ...BENCH_STACK_ENV, EXEC_TASK_TIMEOUT_MS: '10000' },
  });
  const logger = createLogger({ service: 'bench', level: 'silent' });
  const bus = await connectBus({ url: stack.env.NATS_URL, prefix: stack.env.NATS_SUBJECT_PREFIX, name: 'bench-audit', logger });
  const js = jetstream(bus.nc, { timeout: 30_000 });
  const db = knex({ client: 'pg', connection: companionDatabaseUrl(stack.env.DATABASE_URL, 'audit'), pool: { min: 0, max: 2 } });
  const count = async (orgId: string) => Number((await db('audit_events').where('org_id', orgId).count<{ n: string }[]>('* as n'))[0].n);
  const lag = () => metricSum(stack.opsUrl('audit'), 'arbiter_audit_consumer_lag');
  const publish = async (list: ArbiterEvent[]) => {
    const pending: Promise<unknown>[] = [];
    for (const e of list) {
      pending.push(js.publish(eventSubject(stack.env.NATS_SUBJECT_PREFIX, e.orgId, e.kind), JSON.stringify(e), { msgID: e.eventId }));
      if (pending.length >= 1000) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
  };
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  say(`bench:audit on ${runsOn()}`);
  try {
    // ---- 1. ingest: raw batched INSERT vs the consumer, same events, same table ----
    const sample = events(INGEST_EVENTS, 'bench-ingest');
    let t0 = performance.now();
    for (let i = 0; i < sample.length; i += BATCH) await insertEvents(db, sample.slice(i, i + BATCH));
    const rawRate = sample.length / ((performance.now() - t0) / 1000);
    await db.raw('delete from audit_events where org_id = ?', ['bench-ingest']);
    await db.raw('vacuum analyze audit_events');
    await stack.stopService('audit');
    await publish(sample);
    await stack.startService('audit');
    t0 = performance.now();
    while ((await count('bench-ingest')) < sample.length) await sleep(20);
    const consumerRate = sample.length / ((performance.now() - t0) / 1000);
    say(`\ningest of ${sample.length} events (${BATCH}-row batches, 6 secondary indexes + primary key):`);
    say(`  raw INSERT … SELECT FROM unnest(…):        ${Math.round(rawRate)} events/s`);
    say(`  consumer (JetStream → PostgreSQL, acked):  ${Math.round(consumerRate)} events/s (includes its start-up)`);
    say(`  consumer / raw:                            ${((consumerRate / rawRate) * 100).toFixed(1)} %   (target >= 50 %)`);

    // ---- 2. burst while running: publish rate, then time back to lag 0 ----
    const burst = events(BURST_EVENTS, 'bench-burst');
    t0 = performance.now();
    await publish(burst);
    const published = performance.now();
    while ((await count('bench-burst')) < burst.length || (await lag()) > 0) await sleep(20);
    const settled = performance.now();
    say(`\nburst of ${burst.length} events while the audit service runs:`);
    say(`  published at ${Math.round(burst.length / ((published - t0) / 1000))} events/s (JetStream acks awaited)`);
    say(`  lag back to 0 and every row stored ${Math.round(settled - published)} ms after the last publish   (target <= 2000 ms)`);

    // ---- 3. GET /audit over SEED_ROWS events ----
    const orgId = stack.orgId;
    const spanSeconds = 60 * 24 * 3600; // two months back
    const now = new Date();
    for (let m = addMonths(monthOf(now), -3); m <= monthOf(now); m = addMonths(m, 1)) await createPartition(db, m);
    t0 = performance.now();
    await db.raw(
      `insert into audit_events (event_id, org_id, kind, at, actor_user_id, actor_api_key_id, resource_type, resource_id, base_id, details)
       select gen_random_uuid(), ?, (array['created','edited','published','executed','deleted'])[1 + i % 5],
              now() - make_interval(secs => (i::float8 * ?) / ?), 'user-' || (i % 50), null, 'policy', 'rec-' || (i % 20000),
              'base-' || (i % 1000), '{"name":"seed"}'::jsonb
         from generate_series(1, ?) as i`,
      [orgId, spanSeconds, SEED_ROWS, SEED_ROWS],
    );
    await db.raw('analyze audit_events');
    say(
      `\nGET /audit over ${SEED_ROWS} events of org \`${orgId}\` (seeded in ${Math.round((performance.now() - t0) / 1000)} s), ${QUERIES} sequential requests each:`,
    );
    const deep = await db.raw<{ rows: { at: Date; event_id: string }[] }>(
      `select at, event_id from audit_events where org_id = ? order by at desc, event_id desc offset ? limit 1`,
      [orgId, Math.floor(SEED_ROWS * 0.9)],
    );
    const cursor = Buffer.from(JSON.stringify({ at: deep.rows[0].at.toISOString(), id: deep.rows[0].event_id }), 'utf8').toString(
      'base64url',
    );
    const targets: Array<[string, string]> = [
      ['first page, no filter', '/audit?limit=50'],
      ['first page, kind + actor', '/audit?limit=50&kind=published&actor=user-7'],
      ['first page, kind + actor, no match', '/audit?limit=50&kind=edited&actor=user-7'],
      ['first page, baseId', '/audit?limit=50&baseId=base-42'],
      [
        'first page, kind x2 + time range',
        `/audit?limit=50&kind=created&kind=deleted&from=${encodeURIComponent(new Date(Date.now() - 20 * 86_400_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() - 10 * 86_400_000).toISOString())}`,
      ],
      ['deep page (90 % back), no filter', `/audit?limit=50&cursor=${cursor}`],
      ['deep page (90 % back), kind + actor', `/audit?limit=50&kind=executed&actor=user-3&cursor=${cursor}`],
    ];
    const headers = { 'x-api-key': stack.adminKey };
    for (const [name, url] of targets) {
      for (let i = 0; i < 10; i++) await fetch(stack.baseUrl + url, { headers }).then((r) => r.arrayBuffer());
      const times: number[] = [];
      let items = 0;
      for (let i = 0; i < QUERIES; i++) {
        const s = performance.now();
        const res = await fetch(stack.baseUrl + url, { headers });
        const body = (await res.json()) as { items?: unknown[] };
        times.push(performance.now() - s);
        if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        items = body.items?.length ?? 0;
      }
      times.sort((a, b) => a - b);
      say(
        `  ${name.padEnd(38)} p50 ${pct(times, 50).toFixed(1)} ms  p95 ${pct(times, 95).toFixed(1)} ms  (${items} items)   (target p95 <= 50 ms)`,
      );
    }

    // ---- 4. stored runs with and without the audit service ----
    const principal: Principal = { orgId, userId: 'admin', role: 'admin' };
    const draft = await bus.request(RegistrySubject.policyCreate, { principal, name: 'licence', rule: LICENCE_POLICY }, PolicyRecord, {
      timeoutMs: 20_000,
    });
    const v1 = (
      await bus.request(RegistrySubject.policyUpdate, { principal, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply, {
        timeoutMs: 20_000,
      })
    ).record;
    const target = { url: `${stack.baseUrl}/run/policy/${v1.baseId}`, body: JSON.stringify(LICENCE_DATA), headers };
    await measure('warm-up', target, { duration: 2 });
    const without: Measured[] = [];
    const withAudit: Measured[] = [];
    const slice = Math.max(2, Math.round(DURATION_S / ROUNDS) + 1);
    for (let round = 0; round < ROUNDS; round++) {
      await stack.stopService('audit');
      without.push(await measure('without audit', target, { duration: slice }));
      await stack.startService('audit');
      withAudit.push(await measure('with audit', target, { duration: slice }));
    }
    const off = combineRounds('stored runs, audit service stopped', without);
    const on = combineRounds('stored runs, audit service running', withAudit);
    say(`\nPOST /run/policy/{baseId}, ${ROUNDS} alternating rounds of ${slice} s:`);
    say(formatRow(off));
    say(formatRow(on));
    say(`  with / without audit:                     ${((on.rps / off.rps) * 100).toFixed(1)} %   (target >= 95 %)`);
    say('\nThe machine is shared with other work: figures are noisy; compare the ratios within one run.');
  } finally {
    await db.destroy();
    await bus.close();
    await stack.stop();
  }
}

await main();
