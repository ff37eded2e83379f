/**
 * `npm run bench:http`: POST /run through the full path (gateway → NATS → execution → worker)
 * beside, in the same run, one fastify process evaluating the same compiled policy in-process
 * (the floor of having no microservices), a fastify hello-world (the HTTP ceiling) and the design
 * skeleton: the same hops (HTTP → NATS → worker thread) doing no work at all.
 * Prints requests/s, p50 and p99 of each and the ratios. Needs the built services.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import {
  BENCH_STACK_ENV,
  CONNECTIONS,
  DURATION_S,
  formatRow,
  jsonLine,
  measure,
  measurePaced,
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
 */
async function startSkeleton(response: unknown): Promise<{ url: string; children: ChildProcess[] }> {
  const subject = `bench.skeleton.${process.pid}`;
  const exec = await startBaseline('skeleton-exec', subject, JSON.stringify(response));
  const gateway = await startBaseline('skeleton-gateway', subject);
  return { url: gateway.url, children: [exec.child, gateway.child] };
}

async function checkAnswer(url: string, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const json = (await res.json()) as { result?: boolean };
  if (res.status !== 200 || json.result !== true) throw new Error(`${url} answered ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return json;
}

async function main(): Promise<void> {
  const stack = await startStack({ services: ['execution', 'gateway'], env: BENCH_STACK_ENV });
  const inprocess = await startBaseline('inprocess');
  const hello = await startBaseline('hello');
  const fullUrl = `${stack.baseUrl}/run`;
  const auth = { 'x-api-key': stack.adminKey };
  const skeleton = await startSkeleton(await checkAnswer(fullUrl, auth));
  try {
    await checkAnswer(inprocess.url, {});
    await checkAnswer(skeleton.url, {});
    // Warm-up: JIT, connection pools, every worker's compile cache.
    await measure('warm-up', { url: fullUrl, body, headers: auth }, { duration: 2 });
    await measure('warm-up', { url: inprocess.url, body }, { duration: 2 });
    await measure('warm-up', { url: skeleton.url, body }, { duration: 2 });

    const results: Measured[] = [];
    results.push(await measure('full path (gateway→NATS→worker)', { url: fullUrl, body, headers: auth }));
    results.push(await measure('in-process fastify (floor)', { url: inprocess.url, body }));
    results.push(await measure('fastify hello-world (ceiling)', { url: hello.url, body }));
    results.push(await measure('design skeleton (hops, no work)', { url: skeleton.url, body }));
    const [full, floor, ceiling, bare] = results as [Measured, Measured, Measured, Measured];
    const halfRate = Math.max(1, Math.floor(full.rps / 2));
    const [half, bareHalf] = (await measurePaced(
      [
        { name: 'full path at half its max rate', url: fullUrl, body, headers: auth },
        { name: 'design skeleton at the same rate', url: skeleton.url, body },
      ],
      { rate: halfRate },
    )) as [Measured, Measured];
    const counters = {
      compiles: await metricSum(stack.opsUrl('execution'), 'arbiter_exec_compiles_total'),
      hits: await metricSum(stack.opsUrl('execution'), 'arbiter_exec_cache_hits_total'),
    };

    console.log(`\nPOST /run, ${CONNECTIONS} connections, ${DURATION_S} s each, 7-rule policy, trace on\n`);
    for (const m of [...results, half, bareHalf]) console.log(formatRow(m, 34));
    console.log('');
    console.log(`full path / in-process throughput:   ${((full.rps / floor.rps) * 100).toFixed(1)} %   (target >= 35 %)`);
    console.log(`in-process / hello-world throughput: ${((floor.rps / ceiling.rps) * 100).toFixed(1)} %`);
    console.log(
      `design skeleton / in-process:        ${((bare.rps / floor.rps) * 100).toFixed(1)} %   (the most any implementation of the design reaches here)`,
    );
    console.log(
      `full path / design skeleton:         ${((full.rps / bare.rps) * 100).toFixed(1)} %   (what auth, limits, validation and evaluation cost)`,
    );
    console.log(
      `p99 at half the full path's max rate: ${half.p99} ms   (target <= 15 ms; design skeleton at that rate: ${bareHalf.p99} ms)`,
    );
    console.log(`compiles of the repeated rule: ${counters.compiles} (one per worker at most), cache hits: ${counters.hits}`);
    const date = new Date().toISOString();
    for (const m of [...results, half, bareHalf]) console.log(jsonLine('http', m, date));
    reportFailures([...results, half, bareHalf]);
  } finally {
    for (const child of [inprocess.child, hello.child, ...skeleton.children]) child.kill('SIGTERM');
    await stack.stop();
  }
}

await main();
