/**
 * `npm run bench:shadow`: what a shadow candidate (docs/design/shadow-runs.md) costs the callers of
 * its base. Two bases of the same policy in one stack, one with a shadow at sampleRate 1 (its draft
 * differs, so every comparison is real work), one without; paired in the same run:
 *
 * 1. the caller's p99 at half the max rate (an open-loop steady rate), shadowed over plain
 *    (target <= 1.1x): shadow runs wait behind live work and are dropped first;
 * 2. the execution service's CPU per run at that rate, shadowed over plain (target <= 2.2x: each
 *    shadowed run is evaluated twice and compared).
 *
 * The two loads alternate in rounds so background load drifts hit both alike. Prints the shadow's
 * report (sampled, compared, dropped) so a ratio built on dropped shadow runs shows as such.
 * Needs the built services.
 */

import {
  PolicyDraftReply,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject,
  ShadowReport,
  ShadowSubject,
  type Principal,
} from '@arbiter/contracts';
import { connectBus, createLogger } from '@arbiter/service-kit';
import { startStack } from '../../test/e2e/harness.js';
import { cpuMicros } from '../cpu.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import {
  BENCH_STACK_ENV,
  combineRounds,
  DURATION_S,
  formatRow,
  jsonLine,
  measure,
  measurePaced,
  reportFailures,
  runsOn,
  type Measured,
} from '../load.js';

/** The two loads alternate in this many rounds (`BENCH_ROUNDS`). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

async function main(): Promise<void> {
  const stack = await startStack({
    services: ['execution', 'registry', 'gateway'],
    // No audit service here: decision records stay off so both bases do the same live work.
    env: { ...BENCH_STACK_ENV, DECISIONS_ENABLED: 'false', API_KEY_CACHE_TTL_SECONDS: '3600' },
  });
  const logger = createLogger({ service: 'bench', level: 'silent' });
  const bus = await connectBus({ url: stack.env.NATS_URL, prefix: stack.env.NATS_SUBJECT_PREFIX, name: 'bench-shadow', logger });
  try {
    const principal: Principal = { orgId: stack.orgId, userId: 'admin', role: 'admin' };
    const opts = { timeoutMs: 20_000 };
    const published = async (name: string) => {
      const draft = await bus.request(RegistrySubject.policyCreate, { principal, name, rule: LICENCE_POLICY }, PolicyRecord, opts);
      return (
        await bus.request(
          RegistrySubject.policyUpdate,
          { principal, policyId: draft.policyId, status: 'published' },
          PolicyUpdateReply,
          opts,
        )
      ).record;
    };
    const plain = await published('plain');
    const shadowed = await published('shadowed');
    // The candidate: the same policy with one threshold moved, so answers differ for some inputs.
    const draft = await bus.request(RegistrySubject.policyDraft, { principal, policyId: shadowed.baseId }, PolicyDraftReply, opts);
    const candidateRule = LICENCE_POLICY.replace(/at least (\d+)/, (_m, n: string) => `at least ${Number(n) + 1}`);
    if (candidateRule === LICENCE_POLICY) throw new Error('the fixture policy has no "at least N" to move');
    await bus.request(
      RegistrySubject.policyUpdate,
      { principal, policyId: draft.record.policyId, status: 'draft', rule: candidateRule },
      PolicyUpdateReply,
      opts,
    );
    await bus.request(
      ShadowSubject.policySet,
      { principal, baseId: shadowed.baseId, recordId: draft.record.policyId, sampleRate: 1 },
      ShadowReport,
      opts,
    );

    const auth = { 'x-api-key': stack.adminKey };
    const body = JSON.stringify(LICENCE_DATA);
    const plainTarget = { name: 'no shadow', url: `${stack.baseUrl}/run/policy/${plain.baseId}`, body, headers: auth };
    const shadowTarget = { name: 'shadow at sampleRate 1', url: `${stack.baseUrl}/run/policy/${shadowed.baseId}`, body, headers: auth };

    // Warm-up, then the max rate of the plain base (closed loop).
    await measure('warm-up', plainTarget, { duration: 2 });
    await measure('warm-up', shadowTarget, { duration: 2 });
    const max = await measure('max rate, no shadow', plainTarget, { duration: Math.max(3, Math.round(DURATION_S / 2)) });
    const rate = Math.max(10, Math.floor(max.rps / 2));

    const execPid = () => {
      const pid = stack.pid('execution');
      if (pid === undefined) throw new Error('the execution service is not running');
      return pid;
    };
    const before = await bus.request(ShadowSubject.policyGet, { principal, baseId: shadowed.baseId }, ShadowReport, opts);
    const slice = Math.max(1, DURATION_S / ROUNDS);
    const rounds: Record<'plain' | 'shadow', Measured[]> = { plain: [], shadow: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [which, target] of [
        ['plain', plainTarget],
        ['shadow', shadowTarget],
      ] as const) {
        const cpu0 = cpuMicros(execPid())!;
        const m = (await measurePaced([target], { rate, duration: slice, rounds: 1, warmup: 0.5 }))[0];
        if (m === undefined) throw new Error('measurePaced answered no figure');
        // Shadow work runs after the answers: its CPU counts once the last of it is done.
        if (which === 'shadow') await settled(bus, principal, shadowed.baseId);
        const cpuUs = cpuMicros(execPid())! - cpu0;
        rounds[which].push({ ...m, requests: Math.round(m.rps * slice), cpuUs });
      }
    }
    const after = await bus.request(ShadowSubject.policyGet, { principal, baseId: shadowed.baseId }, ShadowReport, opts);
    const a = combineRounds('no shadow', rounds.plain);
    const b = combineRounds('shadow at sampleRate 1', rounds.shadow);
    const p99Ratio = b.p99 / a.p99;
    const cpuRatio = b.cpuUs! / b.requests! / (a.cpuUs! / a.requests!);
    const sampled = after.sampled - before.sampled;
    const compared = after.compared - before.compared;
    const dropped = after.dropped - before.dropped;

    console.log(runsOn());
    console.log(
      `\nPOST /run/policy/{baseId}, 7-rule policy, max ${Math.round(max.rps)} req/s, paced at ${rate} req/s (half), ${ROUNDS} alternating rounds of ${slice} s\n`,
    );
    for (const m of [a, b]) console.log(formatRow(m));
    console.log('');
    console.log(`caller p99, shadow / no shadow:            ${p99Ratio.toFixed(2)}x   (target <= 1.1x)`);
    console.log(`execution CPU per run, shadow / no shadow: ${cpuRatio.toFixed(2)}x   (target <= 2.2x)`);
    console.log(
      `shadow report during the load: sampled ${sampled}, compared ${compared}, dropped ${dropped}, changed ${after.changed - before.changed}`,
    );
    // Both bases answer on one route: its statuses other than 200 over the whole run (warm-up included).
    const metrics = await (await fetch(`${stack.opsUrl('gateway')}/metrics`)).text();
    const refused = metrics
      .split('\n')
      .filter((l) => l.startsWith('arbiter_http_requests_total{') && l.includes('/run/policy/:baseId"') && !l.includes('status="200"'));
    console.log(`non-200 answers of /run/policy/:baseId: ${refused.length === 0 ? 'none' : refused.join('; ')}`);
    const date = new Date().toISOString();
    for (const m of [a, b]) console.log(jsonLine('shadow', m, date));
    console.log(
      JSON.stringify({
        bench: 'shadow',
        name: 'ratio',
        p99Ratio: Number(p99Ratio.toFixed(3)),
        cpuRatio: Number(cpuRatio.toFixed(3)),
        sampled,
        compared,
        dropped,
        rate,
        date,
      }),
    );
    reportFailures([a, b]);
  } finally {
    await bus.close();
    await stack.stop();
  }
}

/** Waits until the shadow's counts stop moving: every sampled run compared or dropped, and written. */
async function settled(bus: Awaited<ReturnType<typeof connectBus>>, principal: Principal, baseId: string): Promise<void> {
  let last = -1;
  for (let i = 0; i < 100; i++) {
    const r = await bus.request(ShadowSubject.policyGet, { principal, baseId }, ShadowReport, { timeoutMs: 5000 });
    if (r.sampled === last && r.sampled === r.compared + r.dropped) return;
    last = r.sampled;
    // Counters are written every EXEC_SHADOW_FLUSH_MS (500 ms): poll at that pace.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

await main();
