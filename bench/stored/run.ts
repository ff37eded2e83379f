/**
 * `npm run bench:stored`: `POST /run/policy/{baseId}` (a stored, published policy resolved from the
 * Redis runnable index) beside `POST /run` with the same rule text, through the same full stack
 * (gateway → NATS → execution → worker) in the same run, and the as-of run
 * `POST /run/policy/{baseId}?asOf=` (the version runnable at an earlier instant, picked from the
 * base's timeline in the index; docs/design/timeline.md) beside the plain run by base id. Prints
 * requests/s, p50 and p99 of each, the ratios (target >= 90 % each), and the PostgreSQL
 * transactions of the stack's database during the load (target 0). The loads alternate in rounds
 * so background load drifts hit them alike. Needs the built services.
 */

import { PolicyDraftReply, PolicyRecord, PolicyUpdateReply, RegistrySubject, type Principal } from '@arbiter/contracts';
import { connectBus, createLogger } from '@arbiter/service-kit';
import pg from 'pg';
import { PG_ADMIN_URL, startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import {
  BENCH_STACK_ENV,
  combineRounds,
  CONNECTIONS,
  DURATION_S,
  formatRow,
  jsonLine,
  measure,
  metricSum,
  reportFailures,
  type Measured,
} from '../load.js';

/** The two loads alternate in this many rounds (DURATION_S split between them), so drifting background load hits both alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
/** PostgreSQL reports a backend's counts within its idle stats interval (10 s): wait that long around the measured load. */
const PG_STATS_SETTLE_MS = 11_000;

/** One request, checked: the bench must measure correct answers. */
async function checkAnswer(url: string, body: string, headers: Record<string, string>, expect: Record<string, unknown>): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const json = (await res.json()) as Record<string, unknown>;
  const ok = res.status === 200 && Object.entries(expect).every(([k, v]) => json[k] === v);
  if (!ok) throw new Error(`${url} answered ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
}

async function main(): Promise<void> {
  const stack = await startStack({
    services: ['execution', 'registry', 'gateway'],
    env: {
      ...BENCH_STACK_ENV,
      // The outbox relays' sweep (every 30 s by default) is the stack's one periodic PostgreSQL
      // statement; they still run after every commit.
      REGISTRY_OUTBOX_INTERVAL_MS: '600000',
      GATEWAY_OUTBOX_INTERVAL_MS: '600000',
      API_KEY_CACHE_TTL_SECONDS: '3600',
      // The gateway's key-usage flush (one UPDATE of `lastUsedAt` for all keys used since the last
      // one, every 30 s by default, however many requests) is kept out of the measured window: it
      // is not a per-run query. The printout says so.
      KEY_USAGE_FLUSH_MS: '600000',
    },
  });
  const logger = createLogger({ service: 'bench', level: 'silent' });
  const bus = await connectBus({ url: stack.env.NATS_URL, prefix: stack.env.NATS_SUBJECT_PREFIX, name: 'bench-stored', logger });
  const db = new pg.Client({ connectionString: PG_ADMIN_URL });
  await db.connect();
  const database = new URL(stack.env.DATABASE_URL).pathname.slice(1);
  const xacts = async () =>
    Number(
      (
        (await db.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [database])).rows[0] as {
          n: string;
        }
      ).n,
    );
  try {
    const principal: Principal = { orgId: stack.orgId, userId: 'admin', role: 'admin' };
    const draft = await bus.request(RegistrySubject.policyCreate, { principal, name: 'licence', rule: LICENCE_POLICY }, PolicyRecord, {
      timeoutMs: 20_000,
    });
    const v1 = (
      await bus.request(RegistrySubject.policyUpdate, { principal, policyId: draft.policyId, status: 'published' }, PolicyUpdateReply, {
        timeoutMs: 20_000,
      })
    ).record;
    // A second version, so the as-of run picks an earlier one from the timeline.
    const next = await bus.request(RegistrySubject.policyDraft, { principal, policyId: v1.policyId }, PolicyDraftReply, {
      timeoutMs: 20_000,
    });
    const v2 = (
      await bus.request(
        RegistrySubject.policyUpdate,
        { principal, policyId: next.record.policyId, status: 'published' },
        PolicyUpdateReply,
        {
          timeoutMs: 20_000,
        },
      )
    ).record;
    const asOf = new Date(Date.parse(v1.publishedAt!) + Math.floor((Date.parse(v2.publishedAt!) - Date.parse(v1.publishedAt!)) / 2));

    const auth = { 'x-api-key': stack.adminKey };
    const adhocUrl = `${stack.baseUrl}/run`;
    const adhocBody = JSON.stringify({ rule: LICENCE_POLICY, data: LICENCE_DATA });
    const storedUrl = `${stack.baseUrl}/run/policy/${v1.baseId}`;
    const storedBody = JSON.stringify(LICENCE_DATA);
    await checkAnswer(adhocUrl, adhocBody, auth, { result: true });
    await checkAnswer(storedUrl, storedBody, auth, { result: true, policyId: v2.policyId, version: 2 });
    const asOfUrl = `${storedUrl}?asOf=${encodeURIComponent(asOf.toISOString())}`;
    await checkAnswer(asOfUrl, storedBody, auth, { result: true, policyId: v1.policyId, version: 1 });

    // Warm-up: JIT, connection pools, every worker's compile cache, the key cache.
    await measure('warm-up', { url: adhocUrl, body: adhocBody, headers: auth }, { duration: 2 });
    await measure('warm-up', { url: storedUrl, body: storedBody, headers: auth }, { duration: 2 });
    await measure('warm-up', { url: asOfUrl, body: storedBody, headers: auth }, { duration: 2 });

    const ops = stack.opsUrl('execution');
    const fromRegistry = await metricSum(ops, 'arbiter_exec_resolutions_total', 'source="registry"');
    const compiles = await metricSum(ops, 'arbiter_exec_compiles_total');
    await new Promise((r) => setTimeout(r, PG_STATS_SETTLE_MS));
    const before = await xacts();
    const adhocRounds: Measured[] = [];
    const storedRounds: Measured[] = [];
    const asOfRounds: Measured[] = [];
    const slice = Math.max(1, Math.round(DURATION_S / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
      adhocRounds.push(await measure('ad hoc', { url: adhocUrl, body: adhocBody, headers: auth }, { duration: slice }));
      storedRounds.push(await measure('stored', { url: storedUrl, body: storedBody, headers: auth }, { duration: slice }));
      asOfRounds.push(await measure('as of', { url: asOfUrl, body: storedBody, headers: auth }, { duration: slice }));
    }
    await new Promise((r) => setTimeout(r, PG_STATS_SETTLE_MS));
    const pgDelta = (await xacts()) - before;
    const adhoc = combineRounds('POST /run (rule in the body)', adhocRounds);
    const stored = combineRounds('POST /run/policy/{baseId} (stored)', storedRounds);
    const asOfRun = combineRounds('POST /run/policy/{baseId}?asOf= (as of)', asOfRounds);
    const misses = (await metricSum(ops, 'arbiter_exec_resolutions_total', 'source="registry"')) - fromRegistry;
    const storedCompiles = (await metricSum(ops, 'arbiter_exec_compiles_total')) - compiles;
    await checkAnswer(storedUrl, storedBody, auth, { result: true, policyId: v2.policyId });
    await checkAnswer(asOfUrl, storedBody, auth, { result: true, policyId: v1.policyId });

    const ratio = stored.rps / adhoc.rps;
    const asOfRatio = asOfRun.rps / stored.rps;
    console.log(`\n7-rule policy, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${slice} s each, trace on, same stack\n`);
    for (const m of [adhoc, stored, asOfRun]) console.log(formatRow(m));
    console.log('');
    console.log(`stored / ad hoc throughput:                    ${(ratio * 100).toFixed(1)} %   (target >= 90 %)`);
    console.log(`as of / stored throughput:                     ${(asOfRatio * 100).toFixed(1)} %   (target >= 90 %)`);
    console.log(
      `PostgreSQL transactions during the load:       ${pgDelta}   (target 0; ${Math.round((stored.rps + asOfRun.rps) * slice * ROUNDS)} stored and as-of runs)`,
    );
    console.log(
      '  (the key-usage flush, one UPDATE per KEY_USAGE_FLUSH_MS whatever the request count, is set to 10 min: out of this window)',
    );
    console.log(`runnable-index misses (registry resolves):      ${misses}`);
    console.log(`worker compiles during the load:                ${storedCompiles}`);
    const date = new Date().toISOString();
    for (const m of [adhoc, stored, asOfRun]) console.log(jsonLine('stored', m, date));
    reportFailures([adhoc, stored, asOfRun]);
    console.log(
      JSON.stringify({
        bench: 'stored',
        name: 'ratio',
        storedOverAdhoc: Number(ratio.toFixed(3)),
        asOfOverStored: Number(asOfRatio.toFixed(3)),
        pgTransactions: pgDelta,
        indexMisses: misses,
        compiles: storedCompiles,
        date,
      }),
    );
  } finally {
    await db.end();
    await bus.close();
    await stack.stop();
  }
}

await main();
