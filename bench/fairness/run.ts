/**
 * `npm run bench:fairness`: a victim key's `POST /run` latency alone, and while an attacker key sends
 * runaway rules back to back (issue 13 defect 1), through the full stack (gateway → NATS →
 * execution) with ONE worker thread. The two phases alternate in rounds so drifting background
 * load hits both alike. Prints p50/p99/max of each, the ratio of the p99s, the victim's failures
 * (target: none) and p99 under attack (target ≤ 50 ms), and what the attacker got back.
 *
 * BENCH_DURATION (s, default 8) is split between the rounds (BENCH_ROUNDS, default 4);
 * BENCH_ATTACKERS (default 1) loops send runaway rules at once; BENCH_VICTIM_GAP_MS (default 5)
 * paces the victim's sequential requests. Needs the built services.
 */

import { startStack, type Stack } from '../../test/e2e/harness.js';
import { BENCH_STACK_ENV, DURATION_S } from '../load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ATTACKERS = Number(process.env.BENCH_ATTACKERS ?? 1);
const VICTIM_GAP_MS = Number(process.env.BENCH_VICTIM_GAP_MS ?? 5);
const TARGET_P99_MS = 50;

const RUNAWAY = JSON.stringify({
  rule: 'if any of o.items satisfies (any of o.items satisfies (its.p == 5)) -> ok.',
  data: { o: { items: Array.from({ length: 30_000 }, () => ({ p: 1 })) } },
});
const ORDINARY = JSON.stringify({
  rule: 'A **user** is adult if the __age__ of the **user** is at least 18.',
  data: { user: { age: 30 } },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(stack: Stack, key: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${stack.baseUrl}/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function viewKey(stack: Stack, name: string): Promise<string> {
  const res = await fetch(`${stack.baseUrl}/apikeys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': stack.adminKey },
    body: JSON.stringify({ name, scopes: ['view'] }),
  });
  const json = (await res.json()) as { key?: string };
  if (res.status !== 201 || json.key === undefined) throw new Error(`creating key ${name}: ${res.status} ${JSON.stringify(json)}`);
  return json.key;
}

/** The victim: sequential ordinary runs for `ms`; each must answer 200 with result true. */
async function victimRuns(stack: Stack, key: string, ms: number, latencies: number[], failures: string[]): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await post(stack, key, ORDINARY);
    latencies.push(performance.now() - started);
    if (res.status !== 200 || res.json.result !== true) failures.push(`${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
    await sleep(VICTIM_GAP_MS);
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summary(name: string, latencies: number[]): { p50: number; p99: number; max: number; n: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  const s = { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, n: sorted.length };
  console.log(
    `${name.padEnd(34)} ${String(s.n).padStart(6)} runs   p50 ${s.p50.toFixed(1).padStart(6)} ms   p99 ${s.p99.toFixed(1).padStart(6)} ms   max ${s.max.toFixed(1).padStart(6)} ms`,
  );
  return s;
}

async function main(): Promise<void> {
  const stack = await startStack({ services: ['execution', 'gateway'], env: { ...BENCH_STACK_ENV, EXEC_POOL_SIZE: '1' } });
  try {
    const attacker = await viewKey(stack, 'attacker');
    const victim = await viewKey(stack, 'victim');
    // Warm-up: compile both rules, open the sockets.
    for (let i = 0; i < 20; i++) await post(stack, victim, ORDINARY);
    const first = await post(stack, attacker, RUNAWAY);
    if (first.status !== 200 || first.json.errorCode !== 'budget_exceeded') {
      throw new Error(`the runaway rule answered ${first.status} ${JSON.stringify(first.json).slice(0, 300)}`);
    }

    const alone: number[] = [];
    const attacked: number[] = [];
    const failures: string[] = [];
    const attackerStatuses = new Map<string, number>();
    const roundMs = (DURATION_S * 1000) / (2 * ROUNDS);
    for (let round = 0; round < ROUNDS; round++) {
      await victimRuns(stack, victim, roundMs, alone, failures);
      let attacking = true;
      const attack = Promise.all(
        Array.from({ length: ATTACKERS }, async () => {
          while (attacking) {
            // Not parsed: the load generator's own event loop also runs the victim's requests.
            const res = await fetch(`${stack.baseUrl}/run`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': attacker },
              body: RUNAWAY,
            });
            const text = await res.text();
            const code = /"(?:errorCode|code)":"(\w+)"/.exec(text)?.[1];
            const kind = `${res.status}${code === undefined ? '' : ` ${code}`}`;
            attackerStatuses.set(kind, (attackerStatuses.get(kind) ?? 0) + 1);
          }
        }),
      );
      // Let the attack get going before measuring.
      await sleep(100);
      await victimRuns(stack, victim, roundMs, attacked, failures);
      attacking = false;
      await attack;
    }

    console.log(`\nbench:fairness — 1 worker thread, ${ATTACKERS} attacker loop(s) sending runaway rules back to back, ${ROUNDS} rounds`);
    const a = summary('victim alone', alone);
    const b = summary('victim while attacked', attacked);
    console.log(`victim p99 under attack / alone: ${(b.p99 / a.p99).toFixed(2)}×`);
    console.log(`victim failures: ${failures.length}${failures.length > 0 ? ` (first: ${failures[0]})` : ''}`);
    console.log(`attacker answers: ${[...attackerStatuses].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
    console.log(
      `target: victim p99 under attack ≤ ${TARGET_P99_MS} ms and no failures → ${b.p99 <= TARGET_P99_MS && failures.length === 0 ? 'met' : 'NOT met'}` +
        ' (this machine is shared: the load generator, gateway, execution and its worker, NATS and Redis share its cores)',
    );
    console.log(
      JSON.stringify({
        bench: 'fairness',
        date: new Date().toISOString(),
        alone: a,
        attacked: b,
        ratio: b.p99 / a.p99,
        failures: failures.length,
        attacker: Object.fromEntries(attackerStatuses),
      }),
    );
    if (failures.length > 0) process.exitCode = 1;
  } finally {
    await stack.stop();
  }
}

await main();
