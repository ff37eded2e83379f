/**
 * `npm run bench:fairness`: a victim's `POST /run` latency alone, and while others flood the
 * execution service, through the full stack (gateway → NATS → execution) with ONE worker thread.
 * Two floods, each in rounds alternating with the victim alone so drifting background load hits
 * both alike:
 *
 * 1. runaway singles: another person's key sends runaway rules back to back;
 * 2. a batch flood from one person with many keys: BENCH_FLOOD_KEYS keys (default 5) of
 *    one person each loop `POST /run/batch` of BENCH_FLOOD_ITEMS items (default 200) of a rule that
 *    runs to its step budget, and stored-run batches of such a policy. Target: the victim's p99
 *    during the flood ≤ 3× its p99 alone, no failures.
 *
 * The flooders run on a thread of their own (`flood-thread.mjs`), so reading their answers never
 * delays the victim's event loop. Diagnostics: `BENCH_FLOOD_TRACE=0` floods without traces (same
 * worker load, answers of a few bytes an item); `BENCH_NODE_ARGS` adds flags to every service.
 *
 * Prints p50/p99/max of each phase, the ratios, the victim's failures and what the flooders got
 * back. BENCH_DURATION (s, default 8) is split between the rounds (BENCH_ROUNDS, default 4) of
 * each flood; BENCH_VICTIM_GAP_MS (default 5) paces the victim's sequential requests. Needs the
 * built services.
 */

import { PolicyRecord, PolicyUpdateReply, RegistrySubject, type Principal } from '@arbiter/contracts';
import { connectBus, createLogger } from '@arbiter/service-kit';
import { Worker } from 'node:worker_threads';
import { SignJWT } from 'jose';
import { startStack, type Stack } from '../../test/e2e/harness.js';
import { BENCH_STACK_ENV, DURATION_S, runsOn } from '../load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const VICTIM_GAP_MS = Number(process.env.BENCH_VICTIM_GAP_MS ?? 5);
const FLOOD_KEYS = Number(process.env.BENCH_FLOOD_KEYS ?? 5);
const FLOOD_ITEMS = Number(process.env.BENCH_FLOOD_ITEMS ?? 200);
const TARGET_P99_MS = 50;
const TARGET_RATIO = 3;

const RUNAWAY_RULE = 'if any of o.items satisfies (any of o.items satisfies (its.p == 5)) -> ok.';
const RUNAWAY = JSON.stringify({ rule: RUNAWAY_RULE, data: { o: { items: Array.from({ length: 30_000 }, () => ({ p: 1 })) } } });
/** An item on which the runaway rule runs to its (traced) step budget: 150 × 150 steps > 10,000. */
const FLOOD_ITEM = { o: { items: Array.from({ length: 150 }, () => ({ p: 1 })) } };
/** `BENCH_FLOOD_TRACE=0`: the flood asks for no traces (answers of a few bytes an item instead of their trace share). */
const FLOOD_TRACE = process.env.BENCH_FLOOD_TRACE !== '0';
const FLOOD_BATCH = JSON.stringify({
  rule: RUNAWAY_RULE,
  ...(FLOOD_TRACE ? {} : { trace: false }),
  items: Array.from({ length: FLOOD_ITEMS }, () => FLOOD_ITEM),
});
const FLOOD_STORED = JSON.stringify({ items: Array.from({ length: FLOOD_ITEMS }, () => FLOOD_ITEM) });
const ORDINARY = JSON.stringify({
  rule: 'A **user** is adult if the __age__ of the **user** is at least 18.',
  data: { user: { age: 30 } },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(stack: Stack, path: string, key: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** A `view` key of user `userId` (a person of its own), made with that user's bearer token. */
async function keyOf(stack: Stack, userId: string, name: string): Promise<string> {
  const token = await new SignJWT({ org: stack.orgId })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(userId)
    .setIssuer(stack.issuer)
    .setAudience(stack.audience)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(stack.jwtSecret));
  const res = await fetch(`${stack.baseUrl}/apikeys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
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
    const res = await post(stack, '/run', key, ORDINARY);
    latencies.push(performance.now() - started);
    if (res.status !== 200 || !res.text.startsWith('{"result":true')) failures.push(`${res.status} ${res.text.slice(0, 200)}`);
    await sleep(VICTIM_GAP_MS);
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Summary {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

function summary(name: string, latencies: number[]): Summary {
  const sorted = [...latencies].sort((a, b) => a - b);
  const s = { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, n: sorted.length };
  console.log(
    `  ${name.padEnd(40)} ${String(s.n).padStart(6)} runs   p50 ${s.p50.toFixed(1).padStart(6)} ms   p99 ${s.p99.toFixed(1).padStart(6)} ms   max ${s.max.toFixed(1).padStart(6)} ms`,
  );
  return s;
}

/** One flood loop: who sends what where, back to back. */
interface FloodLoop {
  path: string;
  key: string;
  body: string;
}

/**
 * Starts `loops` on a thread of their own (`flood-thread.mjs`): another person's client, whose
 * answers are not read on the victim's event loop. Resolves, once stopped, to the answers by kind.
 */
function startFlood(stack: Stack, loops: FloodLoop[]): { stop: () => Promise<Map<string, number>> } {
  const thread = new Worker(new URL('./flood-thread.mjs', import.meta.url), { workerData: { baseUrl: stack.baseUrl, loops } });
  const done = new Promise<Map<string, number>>((resolve, reject) => {
    thread.once('message', (answers: Record<string, number>) => resolve(new Map(Object.entries(answers))));
    thread.once('error', reject);
  });
  return {
    stop: async () => {
      thread.postMessage('stop');
      const answers = await done;
      await thread.terminate();
      return answers;
    },
  };
}

/**
 * Rounds of the victim alone, then while the flood's loops run; returns the two latency lists, the
 * victim's failures and the flood's answers by kind.
 */
async function measure(
  stack: Stack,
  victim: string,
  loops: FloodLoop[],
): Promise<{ alone: number[]; flooded: number[]; failures: string[]; answers: Map<string, number> }> {
  const alone: number[] = [];
  const flooded: number[] = [];
  const failures: string[] = [];
  const answers = new Map<string, number>();
  const roundMs = (DURATION_S * 1000) / (2 * ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    await victimRuns(stack, victim, roundMs, alone, failures);
    const flood = startFlood(stack, loops);
    // Let the flood get going before measuring.
    await sleep(200);
    await victimRuns(stack, victim, roundMs, flooded, failures);
    for (const [kind, n] of await flood.stop()) answers.set(kind, (answers.get(kind) ?? 0) + n);
  }
  return { alone, flooded, failures, answers };
}

async function main(): Promise<void> {
  console.log(`bench:fairness on ${runsOn()}`);
  const stack = await startStack({
    services: ['execution', 'registry', 'gateway'],
    env: { ...BENCH_STACK_ENV, EXEC_POOL_SIZE: '1' },
    // `BENCH_PROFILE=<dir>`: CPU profiles of the services (written when they stop); `BENCH_NODE_ARGS`: more flags for them.
    nodeArgs: [
      ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
  });
  const bus = await connectBus({
    url: stack.env.NATS_URL,
    prefix: stack.env.NATS_SUBJECT_PREFIX,
    name: 'bench-fairness',
    logger: createLogger({ service: 'bench', level: 'silent' }),
  });
  try {
    const admin: Principal = { orgId: stack.orgId, userId: 'admin', role: 'admin' };
    const draft = await bus.request(RegistrySubject.policyCreate, { principal: admin, name: 'runaway', rule: RUNAWAY_RULE }, PolicyRecord, {
      timeoutMs: 20_000,
    });
    const policy = (
      await bus.request(
        RegistrySubject.policyUpdate,
        { principal: admin, policyId: draft.policyId, status: 'published' },
        PolicyUpdateReply,
        {
          timeoutMs: 20_000,
        },
      )
    ).record;
    const victim = await keyOf(stack, 'victim', 'victim');
    const attacker = await keyOf(stack, 'attacker', 'attacker');
    const flooders = await Promise.all(Array.from({ length: FLOOD_KEYS }, (_, i) => keyOf(stack, 'flooder', `flooder-${i}`)));
    // Warm-up: compile the rules, open the sockets; check the floods do what they should.
    for (let i = 0; i < 20; i++) await post(stack, '/run', victim, ORDINARY);
    const first = await post(stack, '/run', attacker, RUNAWAY);
    if (first.status !== 200 || !first.text.includes('"errorCode":"budget_exceeded"')) {
      throw new Error(`the runaway rule answered ${first.status} ${first.text.slice(0, 300)}`);
    }
    const batch = await post(stack, '/run/batch', flooders[0], FLOOD_BATCH);
    const storedBatch = await post(stack, `/run/policy/${policy.baseId}/batch`, flooders[0], FLOOD_STORED);
    // A flood batch is more work than its caller waits for: its items answer budget_exceeded, or timeout once it has gone.
    for (const res of FLOOD_TRACE ? [batch, storedBatch] : []) {
      if (res.status !== 200 || !/"(errorCode|code)":"(budget_exceeded|timeout)"/.test(res.text)) {
        throw new Error(`a flood batch answered ${res.status} ${res.text.slice(0, 300)}`);
      }
    }

    const singles = await measure(stack, victim, [{ path: '/run', key: attacker, body: RUNAWAY }]);
    const flood = await measure(
      stack,
      victim,
      flooders.map((key, i) =>
        i % 2 === 0
          ? { path: '/run/batch', key, body: FLOOD_BATCH }
          : { path: `/run/policy/${policy.baseId}/batch${FLOOD_TRACE ? '' : '?trace=false'}`, key, body: FLOOD_STORED },
      ),
    );

    console.log(`\n1 worker thread, ${ROUNDS} rounds per flood, the victim alone and flooded in turn:\n`);
    console.log('Runaway singles from another person:');
    const a = summary('victim alone', singles.alone);
    const b = summary('victim while runaway singles run', singles.flooded);
    console.log(`  victim p99 under attack / alone: ${(b.p99 / a.p99).toFixed(2)}x   (target: p99 <= ${TARGET_P99_MS} ms)`);
    console.log(`  attacker answers: ${[...singles.answers].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
    console.log(
      `\nBatch flood from one person with ${FLOOD_KEYS} keys: /run/batch and /run/policy/{baseId}/batch of ${FLOOD_ITEMS} items running to their step budget:`,
    );
    const c = summary('victim alone', flood.alone);
    const d = summary('victim during the flood', flood.flooded);
    const ratio = d.p99 / c.p99;
    console.log(`  victim p99 during the flood / alone: ${ratio.toFixed(2)}x   (target <= ${TARGET_RATIO}x)`);
    console.log(`  flooder answers: ${[...flood.answers].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
    const failures = [...singles.failures, ...flood.failures];
    console.log(`\nvictim failures: ${failures.length}${failures.length > 0 ? ` (first: ${failures[0]})` : ''}`);
    const met = b.p99 <= TARGET_P99_MS && ratio <= TARGET_RATIO && failures.length === 0;
    console.log(
      `targets: runaway singles p99 <= ${TARGET_P99_MS} ms, batch flood p99 <= ${TARGET_RATIO}x alone, no failures → ${met ? 'met' : 'NOT met'}` +
        ' (this machine is shared: the load generator, gateway, execution and its worker, NATS and Redis share its cores)',
    );
    console.log(
      JSON.stringify({
        bench: 'fairness',
        node: process.version,
        date: new Date().toISOString(),
        singles: { alone: a, attacked: b, ratio: b.p99 / a.p99, answers: Object.fromEntries(singles.answers) },
        flood: { keys: FLOOD_KEYS, items: FLOOD_ITEMS, alone: c, flooded: d, ratio, answers: Object.fromEntries(flood.answers) },
        failures: failures.length,
      }),
    );
    if (failures.length > 0) process.exitCode = 1;
  } finally {
    await bus.close();
    await stack.stop();
  }
}

await main();
