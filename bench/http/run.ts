/**
 * `npm run bench:http`: POST /run through the full path (gateway → NATS → execution → worker)
 * beside, in the same run, one fastify process evaluating the same compiled policy in-process
 * (the floor of having no microservices), a fastify hello-world (the HTTP ceiling) and the design
 * skeleton: the same hops (HTTP → NATS → worker thread) doing no work at all, per request and
 * coalesced per event-loop turn; the full path with EXEC_COALESCE on and off (two stacks); and
 * `POST /run/batch` with 100 items, as evaluations per second.
 * Prints requests/s, p50 and p99 of each and the ratios. Needs the built services.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import {
  BENCH_STACK_ENV,
  combineRounds,
  CONNECTIONS,
  DURATION_S,
  formatRow,
  jsonLine,
  measure,
  measurePacedRounds,
  median,
  metricSum,
  reportFailures,
  type Measured,
} from '../load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const body = JSON.stringify({ rule: LICENCE_POLICY, data: LICENCE_DATA });

/** Starts `servers.mjs <args>`; resolves with the address it prints once it listens. */
async function startBaseline(...args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(here, 'servers.mjs'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args[0]} server exited with ${code}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      const m = /listening (\S+)/.exec(chunk.toString());
      if (m) resolve(m[1]);
    });
  });
  return { url: `${url}/run`, child };
}

/**
 * The design skeleton: HTTP → NATS → worker thread → back, in two processes like gateway and
 * execution, answering every request with `response` (the real reply, so the same bytes move).
 * `coalesced`: the gateway side sends one turn's requests as one NATS message, the execution side
 * answers it with one piscina task and one reply (what the full path does with EXEC_COALESCE on).
 */
async function startSkeleton(response: unknown, coalesced = false): Promise<{ url: string; children: ChildProcess[] }> {
  const subject = `bench.skeleton${coalesced ? '.coalesced' : ''}.${process.pid}`;
  const suffix = coalesced ? '-coalesced' : '';
  const exec = await startBaseline(`skeleton-exec${suffix}`, subject, JSON.stringify(response));
  const gateway = await startBaseline(`skeleton-gateway${suffix}`, subject);
  return { url: gateway.url, children: [exec.child, gateway.child] };
}

async function checkAnswer(url: string, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const json = (await res.json()) as { result?: boolean };
  if (res.status !== 200 || json.result !== true) throw new Error(`${url} answered ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return json;
}

/** Items of the `/run/batch` load. */
const BATCH_ITEMS = 100;
/**
 * Connections of the `/run/batch` load (`BENCH_BATCH_CONNECTIONS`): each call of 100 items is one
 * `exec.run.many` message, one job of the key's EXEC_CALLER_MAX (64) in the execution service.
 */
const BATCH_CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
/** Alternating rounds of the throughput loads (`BENCH_ROUNDS`). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
/** Rounds of the paced (half-rate) load; the reported p99 is their median. */
const PACED_ROUNDS = Number(process.env.BENCH_PACED_ROUNDS ?? 5);
const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;

/**
 * `BENCH_ONLY=batch`: only single `POST /run` and `POST /run/batch` on one stack, in alternating
 * rounds (paired), and their ratio in evaluations per second.
 */
async function batchOnly(): Promise<void> {
  const stack = await startStack({ services: ['execution', 'gateway'], env: { ...BENCH_STACK_ENV, EXEC_COALESCE: 'true' } });
  const auth = { 'x-api-key': stack.adminKey };
  const batchBody = JSON.stringify({ rule: LICENCE_POLICY, items: Array.from({ length: BATCH_ITEMS }, () => LICENCE_DATA) });
  try {
    await checkAnswer(`${stack.baseUrl}/run`, auth);
    const loads = [
      { name: 'POST /run', target: { url: `${stack.baseUrl}/run`, body, headers: auth }, connections: CONNECTIONS },
      {
        name: `POST /run/batch, ${BATCH_ITEMS} items`,
        target: { url: `${stack.baseUrl}/run/batch`, body: batchBody, headers: auth },
        connections: BATCH_CONNECTIONS,
      },
    ];
    for (const load of loads) await measure('warm-up', load.target, { duration: 2, connections: load.connections });
    const slice = Math.max(1, Math.round(DURATION_S / ROUNDS));
    const rounds: Measured[][] = loads.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, load] of loads.entries()) {
        rounds[i].push(await measure(load.name, load.target, { duration: slice, connections: load.connections }));
      }
    }
    const [single, batch] = rounds.map((r, i) => combineRounds(loads[i].name, r)) as [Measured, Measured];
    console.log(`\n${ROUNDS} alternating rounds of ${slice} s (POST /run ${CONNECTIONS} conn., /run/batch ${BATCH_CONNECTIONS} conn.):\n`);
    for (const [i, r] of rounds.entries())
      console.log(`  ${loads[i].name.padEnd(28)} rounds ${r.map((m) => m.rps.toFixed(0)).join(' / ')} req/s`);
    console.log('');
    for (const m of [single, batch]) console.log(formatRow(m, 34));
    const evals = batch.rps * BATCH_ITEMS;
    const perRound = rounds[1].map((b, i) => ((b.rps * BATCH_ITEMS) / rounds[0][i].rps).toFixed(1)).join(' / ');
    console.log(
      `\nPOST /run/batch (${BATCH_ITEMS} items): ${evals.toFixed(0)} evaluations/s = ${(evals / single.rps).toFixed(1)}x single POST /run` +
        `   (rounds ${perRound}; target >= 10x)`,
    );
    reportFailures([single, batch]);
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  // Two stacks, alike but for EXEC_COALESCE, so both settings are measured in the same run.
  const stack = await startStack({ services: ['execution', 'gateway'], env: { ...BENCH_STACK_ENV, EXEC_COALESCE: 'true' } });
  const stackOff = await startStack({ services: ['execution', 'gateway'], env: { ...BENCH_STACK_ENV, EXEC_COALESCE: 'false' } });
  const inprocess = await startBaseline('inprocess');
  const hello = await startBaseline('hello');
  const fullUrl = `${stack.baseUrl}/run`;
  const offUrl = `${stackOff.baseUrl}/run`;
  const auth = { 'x-api-key': stack.adminKey };
  const authOff = { 'x-api-key': stackOff.adminKey };
  const batchUrl = `${stack.baseUrl}/run/batch`;
  const batchBody = JSON.stringify({ rule: LICENCE_POLICY, items: Array.from({ length: BATCH_ITEMS }, () => LICENCE_DATA) });
  const answer = await checkAnswer(fullUrl, auth);
  const skeleton = await startSkeleton(answer);
  const coalescedSkeleton = await startSkeleton(answer, true);
  try {
    await checkAnswer(offUrl, authOff);
    await checkAnswer(inprocess.url, {});
    await checkAnswer(skeleton.url, {});
    await checkAnswer(coalescedSkeleton.url, {});
    const batchCheck = await fetch(batchUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: batchBody });
    const batchJson = (await batchCheck.json()) as { results?: Array<{ result?: boolean }> };
    if (batchCheck.status !== 200 || batchJson.results?.length !== BATCH_ITEMS || !batchJson.results.every((r) => r.result === true)) {
      throw new Error(`/run/batch answered ${batchCheck.status} ${JSON.stringify(batchJson).slice(0, 200)}`);
    }
    // Warm-up: JIT, connection pools, every worker's compile cache.
    await measure('warm-up', { url: fullUrl, body, headers: auth }, { duration: 2 });
    await measure('warm-up', { url: offUrl, body, headers: authOff }, { duration: 2 });
    await measure('warm-up', { url: batchUrl, body: batchBody, headers: auth }, { duration: 2, connections: BATCH_CONNECTIONS });
    await measure('warm-up', { url: inprocess.url, body }, { duration: 2 });
    await measure('warm-up', { url: skeleton.url, body }, { duration: 2 });
    await measure('warm-up', { url: coalescedSkeleton.url, body }, { duration: 2 });

    const execOps = stack.opsUrl('execution');
    const batchesBefore = await metricSum(execOps, 'arbiter_bus_requests_total', 'exec.batch');
    const singlesBefore = await metricSum(execOps, 'arbiter_bus_requests_total', 'exec.run"');
    // The loads that are compared take turns in rounds, so drifting background load hits them alike.
    const slice = Math.max(1, Math.round(DURATION_S / ROUNDS));
    const loads = [
      { name: 'full path, coalescing on', target: { url: fullUrl, body, headers: auth } },
      { name: 'full path, coalescing off', target: { url: offUrl, body, headers: authOff } },
      { name: 'in-process fastify (floor)', target: { url: inprocess.url, body } },
      { name: 'design skeleton, per request', target: { url: skeleton.url, body } },
      { name: 'design skeleton, coalesced', target: { url: coalescedSkeleton.url, body } },
    ];
    const rounds: Measured[][] = loads.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, load] of loads.entries()) rounds[i].push(await measure(load.name, load.target, { duration: slice }));
    }
    const [full, off, floor, bare, bareCoalesced] = rounds.map((r, i) => combineRounds(loads[i].name, r)) as [
      Measured,
      Measured,
      Measured,
      Measured,
      Measured,
    ];
    const batches = (await metricSum(execOps, 'arbiter_bus_requests_total', 'exec.batch')) - batchesBefore;
    const singles = (await metricSum(execOps, 'arbiter_bus_requests_total', 'exec.run"')) - singlesBefore;
    const fullRequests = Math.round(rounds[0].reduce((n, r) => n + r.rps * slice, 0));
    const ceiling = await measure('fastify hello-world (ceiling)', { url: hello.url, body });
    const batch = await measure(
      `POST /run/batch, ${BATCH_ITEMS} items (${BATCH_CONNECTIONS} conn.)`,
      { url: batchUrl, body: batchBody, headers: auth },
      { connections: BATCH_CONNECTIONS },
    );
    const results = [full, off, floor, ceiling, bare, bareCoalesced, batch];

    // p99 at half the full path's max rate: PACED_ROUNDS alternating rounds, each printed; the median counts.
    const halfRate = Math.max(1, Math.floor(full.rps / 2));
    const paced = await measurePacedRounds(
      [
        { name: 'full path (on) at half its max rate', url: fullUrl, body, headers: auth, rate: halfRate },
        { name: 'full path (off) at the same rate', url: offUrl, body, headers: authOff, rate: halfRate },
        { name: 'design skeleton at the same rate', url: skeleton.url, body, rate: halfRate },
      ],
      { rounds: PACED_ROUNDS, duration: PACED_ROUNDS * 3 },
    );
    const counters = {
      compiles: await metricSum(execOps, 'arbiter_exec_compiles_total'),
      hits: await metricSum(execOps, 'arbiter_exec_cache_hits_total'),
    };

    console.log(`\nPOST /run, ${CONNECTIONS} connections, 7-rule policy, trace on; ${ROUNDS} alternating rounds of ${slice} s:\n`);
    for (const [i, r] of rounds.entries())
      console.log(`  ${loads[i].name.padEnd(32)} rounds ${r.map((m) => m.rps.toFixed(0)).join(' / ')} req/s`);
    console.log('');
    for (const m of results) console.log(formatRow(m, 34));
    console.log('');
    console.log(`full path (coalescing on) / in-process:  ${pct(full.rps, floor.rps)}   (target >= 45 %)`);
    console.log(`full path (coalescing off) / in-process: ${pct(off.rps, floor.rps)}`);
    console.log(`coalescing on / off:                     ${(full.rps / off.rps).toFixed(2)}x`);
    console.log(`design skeleton per request / in-process: ${pct(bare.rps, floor.rps)}`);
    console.log(`design skeleton coalesced / in-process:   ${pct(bareCoalesced.rps, floor.rps)}`);
    console.log(
      `full path (on) / coalesced skeleton:      ${pct(full.rps, bareCoalesced.rps)}   (what auth, limits, validation and evaluation cost)`,
    );
    console.log(`in-process / hello-world:                 ${pct(floor.rps, ceiling.rps)}`);
    console.log(
      `exec messages while the full path ran: ${batches} exec.batch + ${singles} exec.run for ${fullRequests} requests ` +
        `(~${(fullRequests / Math.max(1, batches + singles)).toFixed(1)} requests a message)`,
    );
    const evals = batch.rps * BATCH_ITEMS;
    console.log(
      `POST /run/batch (${BATCH_ITEMS} items): ${evals.toFixed(0)} evaluations/s = ${(evals / full.rps).toFixed(1)}x single POST /run   (target >= 10x)`,
    );
    console.log(`\np99 at half the full path's max rate (${halfRate} req/s), ${PACED_ROUNDS} alternating rounds:`);
    for (const rounds of paced) {
      console.log(
        `  ${rounds[0].name.padEnd(36)} rounds p99 ${rounds.map((r) => `${r.p99}`).join(' / ')} ms   median ${median(rounds.map((r) => r.p99))} ms`,
      );
    }
    console.log(`  (target: median p99 of the full path <= 15 ms)`);
    console.log(`compiles of the repeated rule: ${counters.compiles} (one per worker at most), cache hits: ${counters.hits}`);
    const date = new Date().toISOString();
    const pacedMedians = paced.map((rounds) => ({
      ...rounds[0],
      p50: median(rounds.map((r) => r.p50)),
      p99: median(rounds.map((r) => r.p99)),
      rps: rounds[0].rps,
      failures: rounds.reduce((n, r) => n + r.failures, 0),
    }));
    for (const m of [...results, ...pacedMedians]) console.log(jsonLine('http', m, date));
    reportFailures([...results, ...pacedMedians]);
  } finally {
    for (const child of [inprocess.child, hello.child, ...skeleton.children, ...coalescedSkeleton.children]) child.kill('SIGTERM');
    await stack.stop();
    await stackOff.stop();
  }
}

await (process.env.BENCH_ONLY === 'batch' ? batchOnly() : main());
