/**
 * `npm run bench:http`: POST /run through the full path (gateway → NATS → execution → worker)
 * beside, in the same run, one fastify process evaluating the same compiled policy in-process
 * (the floor of having no microservices) and a fastify hello-world (the HTTP ceiling).
 * Prints requests/s, p50 and p99 of each and the ratios. Needs the built services.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const body = JSON.stringify({ rule: LICENCE_POLICY, data: LICENCE_DATA });

interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
}

async function measure(name: string, url: string, headers: Record<string, string>, opts: { overallRate?: number; duration?: number } = {}): Promise<Measured> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections: CONNECTIONS,
    duration: opts.duration ?? DURATION_S,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  });
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}

async function startBaseline(mode: 'inprocess' | 'hello'): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(here, 'servers.mjs'), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const m = /listening (\S+)/.exec(chunk.toString());
      if (m) resolve(m[1]!);
    });
  });
  return { url: `${url}/run`, child };
}

async function checkAnswer(url: string, headers: Record<string, string>): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const json = (await res.json()) as { result?: boolean };
  if (res.status !== 200 || json.result !== true) throw new Error(`${url} answered ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
}

async function compileCount(opsUrl: string): Promise<{ compiles: number; hits: number }> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const value = (name: string) => Number(/^(\S+)\s+(\S+)$/m.exec(text.split('\n').filter((l) => l.startsWith(name)).join('\n'))?.[2] ?? NaN);
  return { compiles: value('arbiter_exec_compiles_total'), hits: value('arbiter_exec_cache_hits_total') };
}

const fmt = (m: Measured) =>
  `${m.name.padEnd(34)} ${m.rps.toFixed(0).padStart(8)} req/s   p50 ${String(m.p50).padStart(4)} ms   p99 ${String(m.p99).padStart(4)} ms${m.failures ? `   (${m.failures} failed)` : ''}`;

async function main(): Promise<void> {
  const stack = await startStack({ services: ['execution', 'gateway'], env: { LOG_LEVEL: 'warn' } });
  const inprocess = await startBaseline('inprocess');
  const hello = await startBaseline('hello');
  try {
    const fullUrl = `${stack.baseUrl}/run`;
    const auth = { 'x-api-key': stack.adminKey };
    await checkAnswer(fullUrl, auth);
    await checkAnswer(inprocess.url, {});
    // Warm-up: JIT, connection pools, every worker's compile cache.
    await measure('warm-up', fullUrl, auth, { duration: 2 });
    await measure('warm-up', inprocess.url, {}, { duration: 2 });

    const results: Measured[] = [];
    results.push(await measure('full path (gateway→NATS→worker)', fullUrl, auth));
    results.push(await measure('in-process fastify (floor)', inprocess.url, {}));
    results.push(await measure('fastify hello-world (ceiling)', hello.url, {}));
    const [full, floor, ceiling] = results as [Measured, Measured, Measured];
    const half = await measure('full path at half its max rate', fullUrl, auth, { overallRate: Math.max(1, Math.floor(full.rps / 2)) });
    const counters = await compileCount(stack.opsUrl('execution'));

    console.log(`\nPOST /run, ${CONNECTIONS} connections, ${DURATION_S} s each, 7-rule policy, trace on\n`);
    for (const m of [...results, half]) console.log(fmt(m));
    console.log('');
    console.log(`full path / in-process throughput:   ${((full.rps / floor.rps) * 100).toFixed(1)} %   (target >= 35 %)`);
    console.log(`in-process / hello-world throughput: ${((floor.rps / ceiling.rps) * 100).toFixed(1)} %`);
    console.log(`p99 at half the full path's max rate: ${half.p99} ms   (target <= 15 ms)`);
    console.log(`compiles of the repeated rule: ${counters.compiles} (one per worker at most), cache hits: ${counters.hits}`);
    const date = new Date().toISOString();
    for (const m of [...results, half]) console.log(JSON.stringify({ bench: 'http', name: m.name, rps: Math.round(m.rps), p50: m.p50, p99: m.p99, failures: m.failures, date }));
  } finally {
    inprocess.child.kill('SIGTERM');
    hello.child.kill('SIGTERM');
    await stack.stop();
  }
}

await main();
