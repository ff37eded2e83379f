/**
 * `npm run bench:http`: POST /run through the full path (gateway → NATS → execution → worker)
 * beside, in the same run, one fastify process evaluating the same compiled policy in-process
 * (the floor of having no microservices), a fastify hello-world (the HTTP ceiling) and the design
 * skeleton: the same hops (HTTP → NATS → worker thread) doing no work at all, per request and
 * coalesced per event-loop turn; the full path and the in-process server with the trace on and
 * off; and `POST /run/batch` with 100 items, as evaluations per second.
 *
 * Cost is CPU per request (docs/performance.md#method): user + system time of every process that serves the
 * request (gateway, execution with its worker threads, nats-server, redis-server; the in-process
 * server alone), read from `/proc/<pid>/stat` before and after each measured window, ÷ requests
 * answered. The bench starts its own nats-server and redis-server so their CPU is attributable.
 * Prints requests/s, p50, p99 and CPU µs per request of each, and the ratios of the hot-path targets (bench/RESULTS.md).
 * `BENCH_COALESCE_OFF=1` adds a second stack with EXEC_COALESCE off; `BENCH_PROFILE=<dir>` writes
 * `--cpu-prof` profiles of the gateway and execution there. Needs the built services.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNatsServer, startRedisServer, type OwnServer } from '@arbiter/test-kit';
import { startStack, type Stack } from '../../test/e2e/harness.js';
import { CPU_TICK_US } from '../cpu.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import {
  BENCH_STACK_ENV,
  combineRounds,
  CONNECTIONS,
  cpuPerRequest,
  DURATION_S,
  formatProcessCpu,
  formatRow,
  jsonLine,
  measure,
  measurePacedRounds,
  median,
  metricSum,
  reportFailures,
  runsOn,
  type Measured,
} from '../load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const body = JSON.stringify({ rule: LICENCE_POLICY, data: LICENCE_DATA });
const bodyNoTrace = JSON.stringify({ rule: LICENCE_POLICY, data: LICENCE_DATA, trace: false });

/** Items of the `/run/batch` load (`BENCH_BATCH_ITEMS`, default 100: the batch size of the hot-path target). */
const BATCH_ITEMS = Number(process.env.BENCH_BATCH_ITEMS ?? 100);
const batchBody = JSON.stringify({ rule: LICENCE_POLICY, items: Array.from({ length: BATCH_ITEMS }, () => LICENCE_DATA) });
const batchBodyNoTrace = JSON.stringify({
  rule: LICENCE_POLICY,
  items: Array.from({ length: BATCH_ITEMS }, () => LICENCE_DATA),
  trace: false,
});
/** Connections of the `/run/batch` load (`BENCH_BATCH_CONNECTIONS`). */
const BATCH_CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
/** Alternating rounds of the throughput loads (`BENCH_ROUNDS`). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
/** Rounds of the paced (half-rate) load; the reported p99 is their median. */
const PACED_ROUNDS = Number(process.env.BENCH_PACED_ROUNDS ?? 5);
const WITH_COALESCE_OFF = process.env.BENCH_COALESCE_OFF === '1';
/** `BENCH_LANE_OFF=1`: a second stack with the gateway's run lane off (`RUN_LANE=false`), measured in the same rounds. */
const WITH_LANE_OFF = process.env.BENCH_LANE_OFF === '1';
/** Seconds of load each target gets before the measured rounds (`BENCH_WARMUP`). */
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 6);
/** `BENCH_ONLY=batch`: only the full path's single and batch loads (paired rounds) and their ratios. */
const ONLY_BATCH = process.env.BENCH_ONLY === 'batch';

const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;
const times = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? 'n/a' : `${(a / b).toFixed(2)}x`);

/** Starts `servers.mjs <args>`; resolves with the address it prints once it listens. */
async function startBaseline(env: Record<string, string>, ...args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(here, 'servers.mjs'), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
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
async function startSkeleton(
  env: Record<string, string>,
  response: unknown,
  coalesced = false,
): Promise<{ url: string; children: ChildProcess[] }> {
  const subject = `bench.skeleton${coalesced ? '.coalesced' : ''}.${process.pid}`;
  const suffix = coalesced ? '-coalesced' : '';
  const exec = await startBaseline(env, `skeleton-exec${suffix}`, subject, JSON.stringify(response));
  const gateway = await startBaseline(env, `skeleton-gateway${suffix}`, subject);
  return { url: gateway.url, children: [exec.child, gateway.child] };
}

/** What the checks read of an answer. */
interface Answer {
  result?: boolean;
  trace?: unknown[];
  results?: Array<{ result?: boolean; trace?: unknown[] }>;
}

async function post(url: string, payload: string, headers: Record<string, string>): Promise<{ status: number; json: Answer }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload });
  return { status: res.status, json: (await res.json()) as Answer };
}

/** One request, checked: the bench must measure correct answers. */
async function checkAnswer(url: string, headers: Record<string, string>, payload = body): Promise<Answer> {
  const { status, json } = await post(url, payload, headers);
  if (status !== 200 || json.result !== true) throw new Error(`${url} answered ${status} ${JSON.stringify(json).slice(0, 200)}`);
  return json;
}

async function checkBatch(url: string, headers: Record<string, string>, payload: string, trace: boolean): Promise<void> {
  const { status, json } = await post(url, payload, headers);
  const ok =
    status === 200 &&
    json.results?.length === BATCH_ITEMS &&
    json.results.every((r) => r.result === true && (trace || r.trace?.length === 0));
  if (!ok) throw new Error(`/run/batch answered ${status} ${JSON.stringify(json).slice(0, 200)}`);
}

/** A load of the comparison: where it goes, and which processes serve it (whose CPU counts). */
interface Load {
  name: string;
  target: { url: string; body: string; headers?: Record<string, string>; pids: () => number[] };
  connections?: number;
  /** Evaluations per request (100 for the batch loads). */
  per?: number;
}

const pidsOf = (...sources: Array<number | undefined>): number[] => {
  const pids = sources.filter((p): p is number => p !== undefined);
  if (pids.length !== sources.length) throw new Error('a serving process is not running');
  return pids;
};

async function main(): Promise<void> {
  console.log(`bench:http on ${runsOn()}`);
  // Our own nats-server and redis-server: their CPU is attributable to this bench's requests only.
  const servers: OwnServer[] = [];
  const stacks: Stack[] = [];
  const children: ChildProcess[] = [];
  try {
    const nats = await startNatsServer();
    servers.push(nats);
    const redis = await startRedisServer();
    servers.push(redis);
    const serverEnv = { NATS_URL: nats.url, REDIS_URL: redis.url };
    const natsPid = () => nats.process?.pid;
    const redisPid = () => redis.process?.pid;

    const stack = await startStack({
      services: ['execution', 'gateway'],
      env: { ...BENCH_STACK_ENV, ...serverEnv, EXEC_COALESCE: 'true' },
      // `BENCH_PROFILE=<dir>`: CPU profiles of the gateway and execution (written when they stop).
      ...(process.env.BENCH_PROFILE ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] } : {}),
    });
    stacks.push(stack);
    const stackPids = (s: Stack) => () => pidsOf(s.pid('gateway'), s.pid('execution'), natsPid(), redisPid());
    const stackOff = WITH_COALESCE_OFF
      ? await startStack({ services: ['execution', 'gateway'], env: { ...BENCH_STACK_ENV, ...serverEnv, EXEC_COALESCE: 'false' } })
      : undefined;
    if (stackOff) stacks.push(stackOff);
    const stackLaneOff = WITH_LANE_OFF
      ? await startStack({
          services: ['execution', 'gateway'],
          env: { ...BENCH_STACK_ENV, ...serverEnv, EXEC_COALESCE: 'true', RUN_LANE: 'false' },
        })
      : undefined;
    if (stackLaneOff) stacks.push(stackLaneOff);
    const inprocess = await startBaseline(serverEnv, 'inprocess');
    const hello = await startBaseline(serverEnv, 'hello');
    children.push(inprocess.child, hello.child);
    const fullUrl = `${stack.baseUrl}/run`;
    const batchUrl = `${stack.baseUrl}/run/batch`;
    const auth = { 'x-api-key': stack.adminKey };
    const answer = await checkAnswer(fullUrl, auth);
    const skeleton = await startSkeleton(serverEnv, answer);
    const coalescedSkeleton = await startSkeleton(serverEnv, answer, true);
    children.push(...skeleton.children, ...coalescedSkeleton.children);
    await checkAnswer(inprocess.url, {});
    await checkAnswer(inprocess.url, {}, bodyNoTrace);
    await checkAnswer(skeleton.url, {});
    await checkAnswer(coalescedSkeleton.url, {});
    await checkBatch(batchUrl, auth, batchBody, true);
    // The trace switch (docs/design/trace-switch.md): measured when the stack has it.
    const noTrace = await post(fullUrl, bodyNoTrace, auth);
    const traceSwitch = noTrace.status === 200 && noTrace.json.result === true && noTrace.json.trace?.length === 0;
    if (traceSwitch) await checkBatch(batchUrl, auth, batchBodyNoTrace, false);
    else console.log(`(the stack has no trace switch: POST /run with "trace": false answered ${noTrace.status}; trace-off loads skipped)`);

    const fullPids = stackPids(stack);
    const inprocessPids = () => pidsOf(inprocess.child.pid);
    const skeletonPids = (s: { children: ChildProcess[] }) => () => pidsOf(...s.children.map((c) => c.pid), natsPid());
    const allLoads: Load[] = [
      { name: 'in-process fastify (floor)', target: { url: inprocess.url, body, pids: inprocessPids } },
      { name: 'design skeleton, per request', target: { url: skeleton.url, body, pids: skeletonPids(skeleton) } },
      { name: 'design skeleton, coalesced', target: { url: coalescedSkeleton.url, body, pids: skeletonPids(coalescedSkeleton) } },
      { name: 'full path, trace on', target: { url: fullUrl, body, headers: auth, pids: fullPids } },
      ...(stackLaneOff
        ? [
            {
              name: 'full path, run lane off',
              target: {
                url: `${stackLaneOff.baseUrl}/run`,
                body,
                headers: { 'x-api-key': stackLaneOff.adminKey },
                pids: stackPids(stackLaneOff),
              },
            },
          ]
        : []),
      ...(stackOff
        ? [
            {
              name: 'full path, coalescing off',
              target: { url: `${stackOff.baseUrl}/run`, body, headers: { 'x-api-key': stackOff.adminKey }, pids: stackPids(stackOff) },
            },
          ]
        : []),
      ...(traceSwitch
        ? [
            { name: 'in-process fastify, trace off', target: { url: inprocess.url, body: bodyNoTrace, pids: inprocessPids } },
            { name: 'full path, trace off', target: { url: fullUrl, body: bodyNoTrace, headers: auth, pids: fullPids } },
          ]
        : []),
      {
        name: `/run/batch ${BATCH_ITEMS} items, trace on`,
        target: { url: batchUrl, body: batchBody, headers: auth, pids: fullPids },
        connections: BATCH_CONNECTIONS,
        per: BATCH_ITEMS,
      },
      ...(traceSwitch
        ? [
            {
              name: `/run/batch ${BATCH_ITEMS} items, trace off`,
              target: { url: batchUrl, body: batchBodyNoTrace, headers: auth, pids: fullPids },
              connections: BATCH_CONNECTIONS,
              per: BATCH_ITEMS,
            },
          ]
        : []),
    ];
    const loads = ONLY_BATCH ? allLoads.filter((l) => l.name.startsWith('full path') || l.per !== undefined) : allLoads;
    // Warm-up: JIT, connection pools, every worker's compile cache. The full path's processes run far
    // more code than the baselines, and V8 keeps compiling it on its helper threads for 10–15 s of load:
    // measured earlier, that warm-up counted as CPU per request.
    for (const load of loads) await measure('warm-up', load.target, { duration: WARMUP_S, connections: load.connections ?? CONNECTIONS });
    await measure('warm-up', { url: hello.url, body }, { duration: 1 });

    const execOps = stack.opsUrl('execution');
    const messagesBefore = await metricSum(execOps, 'arbiter_bus_requests_total');
    const compilesBefore = await metricSum(execOps, 'arbiter_exec_compiles_total');
    // The loads take turns in rounds, so drifting background load hits them alike.
    const slice = Math.max(1, Math.round(DURATION_S / ROUNDS));
    const rounds: Measured[][] = loads.map(() => []);
    const gatewayOps = stack.opsUrl('gateway');
    // Per full-path load: exec.eval messages the gateway sent and the items they carried (how well coalescing fills them).
    const sent = loads.map(() => ({ messages: 0, items: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, load] of loads.entries()) {
        const full = load.name.startsWith('full path') || load.per !== undefined;
        const before = full
          ? { m: await metricSum(gatewayOps, 'arbiter_eval_messages_sent'), n: await metricSum(gatewayOps, 'arbiter_eval_items_sent') }
          : undefined;
        rounds[i].push(await measure(load.name, load.target, { duration: slice, connections: load.connections ?? CONNECTIONS }));
        if (before) {
          sent[i].messages += (await metricSum(gatewayOps, 'arbiter_eval_messages_sent')) - before.m;
          sent[i].items += (await metricSum(gatewayOps, 'arbiter_eval_items_sent')) - before.n;
        }
      }
    }
    const results = rounds.map((r, i) => combineRounds(loads[i].name, r));
    const byName = (name: string) => results[loads.findIndex((l) => l.name === name)];
    const messages = (await metricSum(execOps, 'arbiter_bus_requests_total')) - messagesBefore;
    const compiles = (await metricSum(execOps, 'arbiter_exec_compiles_total')) - compilesBefore;
    if (ONLY_BATCH) return printBatchOnly(loads, rounds, results);
    const ceiling = await measure('fastify hello-world (ceiling)', { url: hello.url, body, pids: () => pidsOf(hello.child.pid) });

    // p99 at half the full path's max rate: PACED_ROUNDS alternating rounds, each printed; the median counts.
    const full = byName('full path, trace on');
    const halfRate = Math.max(1, Math.floor(full.rps / 2));
    const paced = await measurePacedRounds(
      [
        { name: 'full path at half its max rate', url: fullUrl, body, headers: auth, rate: halfRate },
        { name: 'design skeleton at the same rate', url: skeleton.url, body, rate: halfRate },
      ],
      { rounds: PACED_ROUNDS, duration: PACED_ROUNDS * 3 },
    );

    console.log(
      `\nPOST /run, ${CONNECTIONS} connections (/run/batch: ${BATCH_CONNECTIONS}), 7-rule policy; ${ROUNDS} alternating rounds of ${slice} s;` +
        ` CPU = user+system time of every serving process ÷ requests (resolution ${CPU_TICK_US / 1000} ms a window)\n`,
    );
    for (const [i, r] of rounds.entries())
      console.log(`  ${loads[i].name.padEnd(34)} rounds ${r.map((m) => m.rps.toFixed(0)).join(' / ')} req/s`);
    console.log('');
    for (const [i, m] of results.entries()) console.log(formatRow(m, 36, loads[i].per ?? 1));
    console.log(formatRow(ceiling, 36));

    const floor = byName('in-process fastify (floor)');
    const bare = byName('design skeleton, per request');
    const bareCoalesced = byName('design skeleton, coalesced');
    const batch = byName(`/run/batch ${BATCH_ITEMS} items, trace on`);
    const cpu = (m: Measured | undefined, per = 1) => (m ? cpuPerRequest(m, per) : undefined);
    console.log('\nCPU per request by process (µs):');
    const processNames: Record<string, string[]> = {
      'in-process fastify (floor)': ['in-process'],
      'in-process fastify, trace off': ['in-process'],
      'design skeleton, per request': ['gateway side', 'execution side', 'nats-server'],
      'design skeleton, coalesced': ['gateway side', 'execution side', 'nats-server'],
    };
    for (const [i, m] of results.entries()) {
      const names = processNames[m.name] ?? ['gateway', 'execution', 'nats-server', 'redis-server'];
      const per = loads[i].per ?? 1;
      const parts = (m.cpuUsByProcess ?? []).map((us, k) =>
        formatProcessCpu(names[k], us, k < 2 ? m.cpuUsByThread?.[k] : undefined, (m.requests ?? 1) * per),
      );
      console.log(`  ${m.name.padEnd(34)} ${parts.join('   ')}`);
    }
    console.log('\nCPU per request:');
    for (const m of [bare, bareCoalesced, full]) console.log(`  ${m.name.padEnd(34)} ${times(cpu(m), cpu(floor))} the in-process floor`);
    console.log(
      `  full path / coalesced skeleton (trace on):  ${times(cpu(full), cpu(bareCoalesced))}   (target <= 1.3x)` +
        `   what the full path adds on top of the coalesced hops: ${((cpu(full) ?? 0) - (cpu(bareCoalesced) ?? 0)).toFixed(0)} µs`,
    );
    console.log('\nThroughput:');
    console.log(`  full path (trace on) / in-process:         ${pct(full.rps, floor.rps)}   (target >= 30 %)`);
    console.log(`  design skeleton per request / in-process:  ${pct(bare.rps, floor.rps)}`);
    console.log(`  design skeleton coalesced / in-process:    ${pct(bareCoalesced.rps, floor.rps)}`);
    console.log(`  in-process / hello-world:                  ${pct(floor.rps, ceiling.rps)}`);
    if (stackLaneOff) {
      const off = byName('full path, run lane off');
      console.log(
        `  run lane on / off:                         ${(full.rps / off.rps).toFixed(2)}x   CPU ${times(cpu(full), cpu(off))}` +
          `   (lane off / coalesced skeleton CPU ${times(cpu(off), cpu(bareCoalesced))}, throughput ${pct(off.rps, floor.rps)} of in-process)`,
      );
    }
    if (stackOff) {
      const off = byName('full path, coalescing off');
      console.log(`  coalescing on / off:                       ${(full.rps / off.rps).toFixed(2)}x   CPU ${times(cpu(full), cpu(off))}`);
    }
    if (traceSwitch) {
      const fullNoTrace = byName('full path, trace off');
      const floorNoTrace = byName('in-process fastify, trace off');
      const batchNoTrace = byName(`/run/batch ${BATCH_ITEMS} items, trace off`);
      console.log('\nTrace off:');
      console.log(`  full path / in-process, both trace off:    ${pct(fullNoTrace.rps, floorNoTrace.rps)}`);
      console.log(`  full path CPU/req trace off / on:          ${times(cpu(fullNoTrace), cpu(full))}`);
      const evals = batchNoTrace.rps * BATCH_ITEMS;
      console.log(
        `  /run/batch (${BATCH_ITEMS} items): ${evals.toFixed(0)} evaluations/s = ${(evals / fullNoTrace.rps).toFixed(1)}x single POST /run` +
          ` (both trace off; target >= 12x at 100 items), ${(evals / full.rps).toFixed(1)}x POST /run with trace;` +
          ` CPU ${times(cpu(batchNoTrace, BATCH_ITEMS), cpu(fullNoTrace))} of a single run per evaluation`,
      );
    }
    const evals = batch.rps * BATCH_ITEMS;
    console.log(
      `\nWith traces: /run/batch (${BATCH_ITEMS} items): ${evals.toFixed(0)} evaluations/s = ${(evals / full.rps).toFixed(1)}x single POST /run` +
        `   (target >= 8x); CPU ${times(cpu(batch, BATCH_ITEMS), cpu(full))} of a single run per evaluation`,
    );
    console.log(`exec messages while the loads ran: ${messages} (all loads of the stack); compiles of the repeated rule: ${compiles}`);
    for (const [i, s] of sent.entries()) {
      if (s.messages > 0) console.log(`  ${loads[i].name.padEnd(34)} ${(s.items / s.messages).toFixed(1)} items per exec.eval message`);
    }
    console.log(`\np99 at half the full path's max rate (${halfRate} req/s), ${PACED_ROUNDS} alternating rounds:`);
    for (const r of paced) {
      console.log(
        `  ${r[0].name.padEnd(36)} rounds p99 ${r.map((m) => `${m.p99}`).join(' / ')} ms   median ${median(r.map((m) => m.p99))} ms`,
      );
    }
    console.log(`  (target: median p99 of the full path <= 10 ms)`);
    const date = new Date().toISOString();
    const pacedMedians = paced.map((r) => ({
      ...r[0],
      p50: median(r.map((m) => m.p50)),
      p99: median(r.map((m) => m.p99)),
      failures: r.reduce((n, m) => n + m.failures, 0),
    }));
    for (const [i, m] of results.entries()) console.log(jsonLine('http', m, date, loads[i].per ?? 1));
    for (const m of [ceiling, ...pacedMedians]) console.log(jsonLine('http', m, date));
    reportFailures([...results, ceiling, ...pacedMedians]);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    for (const s of stacks) await s.stop();
    for (const s of servers) await s.stop();
  }
}

/** The printout of `BENCH_ONLY=batch`. */
function printBatchOnly(loads: Load[], rounds: Measured[][], results: Measured[]): void {
  console.log(`\n${ROUNDS} alternating rounds (POST /run ${CONNECTIONS} conn., /run/batch ${BATCH_CONNECTIONS} conn.):\n`);
  for (const [i, r] of rounds.entries())
    console.log(`  ${loads[i].name.padEnd(34)} rounds ${r.map((m) => m.rps.toFixed(0)).join(' / ')} req/s`);
  console.log('');
  for (const [i, m] of results.entries()) console.log(formatRow(m, 36, loads[i].per ?? 1));
  console.log('\nCPU µs per request (per evaluation for /run/batch) by process (node processes by thread kind):');
  const names = ['gateway', 'execution', 'nats-server', 'redis-server'];
  for (const [i, m] of results.entries()) {
    const per = (m.requests ?? 0) * (loads[i].per ?? 1);
    const parts =
      m.cpuUsByProcess?.map((us, k) => formatProcessCpu(names[k], us, k < 2 ? m.cpuUsByThread?.[k] : undefined, per)).join('   ') ??
      'not measured';
    console.log(`  ${loads[i].name.padEnd(34)} ${parts}`);
  }
  for (const trace of ['on', 'off']) {
    const single = results[loads.findIndex((l) => l.name === `full path, trace ${trace}`)];
    const batch = results[loads.findIndex((l) => l.name === `/run/batch ${BATCH_ITEMS} items, trace ${trace}`)];
    if (!single || !batch) continue;
    const evals = batch.rps * BATCH_ITEMS;
    const cpuSingle = cpuPerRequest(single);
    const cpuBatch = cpuPerRequest(batch, BATCH_ITEMS);
    const cpuRatio =
      cpuSingle !== undefined && cpuBatch !== undefined ? `; CPU per evaluation ${(cpuSingle / cpuBatch).toFixed(1)}x less` : '';
    console.log(
      `trace ${trace}: /run/batch ${evals.toFixed(0)} evaluations/s = ${(evals / single.rps).toFixed(1)}x single POST /run${cpuRatio} (target >= ${trace === 'on' ? 8 : 25}x)`,
    );
  }
  reportFailures(results);
}

await main();
