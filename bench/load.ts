/** Shared load-generation helpers of the HTTP benchmarks (autocannon against the running stack). */

import http from 'node:http';
import autocannon from 'autocannon';
import { cpuMicros, threadCpuMicros, type ThreadCpu } from './cpu.js';

/** Seconds per measurement (`BENCH_DURATION`). */
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
/** Concurrent connections (`BENCH_CONNECTIONS`). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

/**
 * Environment every benchmarked stack gets: quiet logs, and a rate limit so high that it never
 * trips. The limiter still counts every request (its Redis work is part of the measured path);
 * at this machine's rates the default test limit (100,000 a minute) would answer 429 within a run.
 */
export const BENCH_STACK_ENV = { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: String(1_000_000_000) };

/** One measured load. */
export interface Measured {
  name: string;
  /** Requests per second (mean). */
  rps: number;
  /** Latency percentiles in ms. */
  p50: number;
  p99: number;
  /** Errors, time-outs and non-2xx answers: a bench with failures measured the wrong thing. */
  failures: number;
  /** Requests answered in the measured window(s). */
  requests?: number;
  /** CPU time (µs) the serving processes spent in the measured window(s), summed over them. */
  cpuUs?: number;
  /** The same, per serving process (in the order of the target's `pids`). */
  cpuUsByProcess?: number[];
  /** The same, per serving process split by thread kind (undefined for a process whose threads could not be read). */
  cpuUsByThread?: Array<ThreadCpu | undefined>;
}

/** `after − before` of each thread kind; undefined unless both were read. */
function threadDelta(before: ThreadCpu | undefined, after: ThreadCpu | undefined): ThreadCpu | undefined {
  if (before === undefined || after === undefined) return undefined;
  return { main: after.main - before.main, workers: after.workers - before.workers, other: after.other - before.other };
}

/** `a + b` of each thread kind; undefined if either is. */
function threadSum(a: ThreadCpu | undefined, b: ThreadCpu | undefined): ThreadCpu | undefined {
  if (a === undefined || b === undefined) return undefined;
  return { main: a.main + b.main, workers: a.workers + b.workers, other: a.other + b.other };
}

/** `process 23 (main 10, workers 11, other 2)`: a process's CPU per request, and by thread kind when known. */
export function formatProcessCpu(name: string, us: number, threads: ThreadCpu | undefined, per: number): string {
  const f = (x: number) => (x / per).toFixed(1);
  return threads === undefined
    ? `${name} ${f(us)}`
    : `${name} ${f(us)} (main ${f(threads.main)}, workers ${f(threads.workers)}, other ${f(threads.other)})`;
}

/** CPU µs per answered request (`per` evaluations per request divides it further); undefined without CPU figures. */
export function cpuPerRequest(m: Measured, per = 1): number | undefined {
  return m.cpuUs === undefined || !m.requests ? undefined : m.cpuUs / m.requests / per;
}

/**
 * POSTs `body` to `url` with autocannon, as fast as the answers come, for `duration` seconds. With
 * `pids`, the CPU time those processes spent in the window is measured too (see `cpu.ts`).
 */
export async function measure(
  name: string,
  target: { url: string; body: string; headers?: Record<string, string>; pids?: () => number[] },
  opts: { duration?: number; connections?: number } = {},
): Promise<Measured> {
  const pids = target.pids?.() ?? [];
  const cpuBefore = pids.map(cpuMicros);
  const threadsBefore = pids.map(threadCpuMicros);
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
    connections: opts.connections ?? CONNECTIONS,
    duration: opts.duration ?? DURATION_S,
  });
  const cpuAfter = pids.map(cpuMicros);
  const threadsAfter = pids.map(threadCpuMicros);
  const byProcess = pids.map((_, i) => (cpuAfter[i] ?? NaN) - (cpuBefore[i] ?? NaN));
  const cpuKnown = pids.length > 0 && byProcess.every(Number.isFinite);
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
    requests: result.requests.total,
    ...(cpuKnown
      ? {
          cpuUs: byProcess.reduce((a, b) => a + b, 0),
          cpuUsByProcess: byProcess,
          cpuUsByThread: pids.map((_, i) => threadDelta(threadsBefore[i], threadsAfter[i])),
        }
      : {}),
  };
}

/** One load target of {@link measurePaced}. */
export interface PacedTarget {
  name: string;
  url: string;
  body: string;
  headers?: Record<string, string>;
}

/**
 * POSTs to each target at a steady `rate` (requests per second, evenly spaced) and reports latency
 * percentiles over all of its answers. The targets take turns in `rounds` rounds that share
 * `duration` seconds each, so drifting background load on this shared machine hits them alike.
 * Each target first gets `warmup` seconds at the same rate on the sockets it is then measured
 * with, answers discarded: opening a few dozen connections at once stalls the first half second,
 * which is the load generator starting, not the server's steady state.
 *
 * Why not autocannon's `overallRate`: it lets each connection send back to back until its share of
 * the second is used up, then idles until the next second, so "half the max rate" is really full
 * load for half of every second and its p99 is the saturated p99. Here requests leave on a fixed
 * schedule whatever the answers (open loop), so a stalled server cannot slow the sender down and
 * hide its queueing. Latency counts from the moment a request is handed to the socket pool (the
 * schedule itself is only as fine as the 1 ms timer that drives it).
 */
export async function measurePaced(
  targets: PacedTarget[],
  opts: { rate: number; duration?: number; rounds?: number; warmup?: number; maxSockets?: number },
): Promise<Measured[]> {
  const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? CONNECTIONS * 4 }));
  try {
    for (const [i, target] of targets.entries()) await sendPaced(agents[i], target, opts.rate, (opts.warmup ?? 2) * 1000);
    const rounds = opts.rounds ?? 4;
    const roundMs = ((opts.duration ?? DURATION_S) * 1000) / rounds;
    const answers = targets.map(() => ({ latencies: [] as number[], failures: 0 }));
    for (let round = 0; round < rounds; round++) {
      for (const [i, target] of targets.entries()) {
        const { latencies, failures } = await sendPaced(agents[i], target, opts.rate, roundMs);
        answers[i].latencies.push(...latencies);
        answers[i].failures += failures;
      }
    }
    return targets.map((target, i) => {
      const { latencies, failures } = answers[i];
      latencies.sort((a, b) => a - b);
      const at = (q: number): number =>
        Math.round(10 * (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN)) / 10;
      return { name: target.name, rps: (latencies.length * 1000) / (roundMs * rounds), p50: at(0.5), p99: at(0.99), failures };
    });
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

/**
 * Like {@link measurePaced}, keeping each round apart: `rounds` rounds in which the targets take
 * turns (alternating, so drifting background load hits them alike), each target at its own steady
 * rate for `duration / rounds` seconds. Returns, per target, one figure per round.
 */
export async function measurePacedRounds(
  targets: Array<PacedTarget & { rate: number }>,
  opts: { duration?: number; rounds?: number; warmup?: number; maxSockets?: number },
): Promise<Measured[][]> {
  const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? CONNECTIONS * 4 }));
  try {
    for (const [i, target] of targets.entries()) await sendPaced(agents[i], target, target.rate, (opts.warmup ?? 2) * 1000);
    const rounds = opts.rounds ?? 5;
    const roundMs = ((opts.duration ?? DURATION_S) * 1000) / rounds;
    const out: Measured[][] = targets.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const [i, target] of targets.entries()) {
        const { latencies, failures } = await sendPaced(agents[i], target, target.rate, roundMs);
        latencies.sort((a, b) => a - b);
        const at = (q: number): number =>
          Math.round(10 * (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN)) / 10;
        out[i].push({ name: target.name, rps: (latencies.length * 1000) / roundMs, p50: at(0.5), p99: at(0.99), failures });
      }
    }
    return out;
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

/** The median of `values` (the lower middle one of an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Sends at `rate` for `durationMs` through `agent`, open loop; resolves once every answer is in. */
async function sendPaced(
  agent: http.Agent,
  target: PacedTarget,
  rate: number,
  durationMs: number,
): Promise<{ latencies: number[]; failures: number }> {
  const url = new URL(target.url);
  const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(target.body)), ...target.headers };
  const latencies: number[] = [];
  let failures = 0;
  let sent = 0;
  let pending = 0;
  const total = Math.round((rate * durationMs) / 1000);
  const start = performance.now();
  const post = (): void => {
    const sentAt = performance.now();
    pending++;
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) failures++;
        latencies.push(performance.now() - sentAt);
        pending--;
      });
    });
    req.on('error', () => {
      failures++;
      pending--;
    });
    req.end(target.body);
  };
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000));
      for (; sent < due; sent++) post();
      if (sent < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  while (pending > 0) await new Promise((r) => setTimeout(r, 5));
  return { latencies, failures };
}

/** The rounds of one load as one figure: mean rate, median p50, worst p99, all failures, summed requests and CPU. */
export function combineRounds(name: string, rounds: Measured[]): Measured {
  const p50s = rounds.map((r) => r.p50).sort((a, b) => a - b);
  const withCpu = rounds.every((r) => r.cpuUs !== undefined);
  const byProcess = withCpu
    ? rounds[0].cpuUsByProcess?.map((_, i) => rounds.reduce((n, r) => n + (r.cpuUsByProcess?.[i] ?? 0), 0))
    : undefined;
  return {
    name,
    rps: rounds.reduce((n, r) => n + r.rps, 0) / rounds.length,
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...rounds.map((r) => r.p99)),
    failures: rounds.reduce((n, r) => n + r.failures, 0),
    requests: rounds.reduce((n, r) => n + (r.requests ?? 0), 0),
    ...(withCpu ? { cpuUs: rounds.reduce((n, r) => n + (r.cpuUs ?? 0), 0) } : {}),
    ...(byProcess ? { cpuUsByProcess: byProcess } : {}),
    ...(withCpu && rounds[0].cpuUsByThread
      ? {
          cpuUsByThread: rounds[0].cpuUsByThread.map((_, i) =>
            rounds.slice(1).reduce((t, r) => threadSum(t, r.cpuUsByThread?.[i]), rounds[0].cpuUsByThread?.[i]),
          ),
        }
      : {}),
  };
}

/** One table row; with CPU figures, the CPU µs per request (per evaluation when `per` > 1). */
export function formatRow(m: Measured, width = 38, per = 1): string {
  const cpu = cpuPerRequest(m, per);
  const cpuText = cpu === undefined ? '' : `   CPU ${cpu.toFixed(0).padStart(5)} µs/${per > 1 ? 'eval' : 'req'}`;
  return `${m.name.padEnd(width)} ${m.rps.toFixed(0).padStart(8)} req/s   p50 ${String(m.p50).padStart(4)} ms   p99 ${String(m.p99).padStart(4)} ms${cpuText}${m.failures ? `   (${m.failures} failed)` : ''}`;
}

/**
 * Figures built on failed requests measure the wrong thing (a 429 or 503 answers fast): says so
 * on stderr and makes the run exit non-zero.
 */
export function reportFailures(measured: Measured[]): void {
  const failed = measured.filter((m) => m.failures > 0);
  if (failed.length === 0) return;
  for (const m of failed) console.error(`INVALID: ${m.failures} requests of "${m.name}" failed; its figures do not count`);
  process.exitCode = 1;
}

/** One machine-readable line per result (with the Node version the bench ran on). */
export function jsonLine(bench: string, m: Measured, date: string, per = 1): string {
  const cpu = cpuPerRequest(m, per);
  return JSON.stringify({
    bench,
    name: m.name,
    rps: Math.round(m.rps),
    p50: m.p50,
    p99: m.p99,
    ...(cpu !== undefined ? { cpuUsPerRequest: Math.round(cpu) } : {}),
    failures: m.failures,
    node: process.version,
    date,
  });
}

/** The line every benchmark starts its printout with: what it ran on. */
export function runsOn(): string {
  return `node ${process.version} (every service process runs on the same binary), ${process.platform}/${process.arch}`;
}

/** Sum of a Prometheus metric's samples (optionally only lines containing `label`) at `opsUrl`. */
export async function metricSum(opsUrl: string, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name) && l.includes(label))
    .reduce((n, l) => n + Number(l.split(/\s+/).at(-1)), 0);
}

/** One answer of {@link sendPacedWhile}: when its request left (`performance.now()`) and its latency (ms). */
export interface PacedSample {
  at: number;
  ms: number;
}

/**
 * POSTs `target` at a steady `rate` (evenly spaced, open loop, as {@link measurePaced} does) for as
 * long as `running()` holds, then waits for every answer. For loads whose window is another
 * operation's duration (a victim's requests while an impact analysis runs).
 */
export async function sendPacedWhile(
  target: PacedTarget,
  rate: number,
  running: () => boolean,
  agent: http.Agent,
): Promise<{ samples: PacedSample[]; failures: number }> {
  const url = new URL(target.url);
  const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(target.body)), ...target.headers };
  const samples: PacedSample[] = [];
  let failures = 0;
  let sent = 0;
  let pending = 0;
  const start = performance.now();
  const post = (): void => {
    const at = performance.now();
    pending++;
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) failures++;
        samples.push({ at, ms: performance.now() - at });
        pending--;
      });
    });
    req.on('error', () => {
      failures++;
      pending--;
    });
    req.end(target.body);
  };
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      if (!running()) return resolve();
      const due = Math.floor(((performance.now() - start) * rate) / 1000);
      for (; sent < due; sent++) post();
      setTimeout(tick, 1);
    };
    tick();
  });
  while (pending > 0) await new Promise((r) => setTimeout(r, 5));
  return { samples, failures };
}

/** The `q` quantile (0–1) of `values` in ms, rounded to 0.1 ms (the sample at floor(q·n) of the sorted values). */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(10 * (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN)) / 10;
}
