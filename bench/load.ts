/** Shared load-generation helpers of the HTTP benchmarks (autocannon against the running stack). */

import autocannon from 'autocannon';

/** Seconds per measurement (`BENCH_DURATION`). */
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
/** Concurrent connections (`BENCH_CONNECTIONS`). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

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
}

/** POSTs `body` to `url` with autocannon for `duration` seconds (optionally at a fixed total rate). */
export async function measure(
  name: string,
  target: { url: string; body: string; headers?: Record<string, string> },
  opts: { duration?: number; overallRate?: number } = {},
): Promise<Measured> {
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
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

/** The rounds of one load as one figure: mean rate, median p50, worst p99, all failures. */
export function combineRounds(name: string, rounds: Measured[]): Measured {
  const p50s = rounds.map((r) => r.p50).sort((a, b) => a - b);
  return {
    name,
    rps: rounds.reduce((n, r) => n + r.rps, 0) / rounds.length,
    p50: p50s[Math.floor(p50s.length / 2)]!,
    p99: Math.max(...rounds.map((r) => r.p99)),
    failures: rounds.reduce((n, r) => n + r.failures, 0),
  };
}

/** One table row. */
export function formatRow(m: Measured, width = 38): string {
  return `${m.name.padEnd(width)} ${m.rps.toFixed(0).padStart(8)} req/s   p50 ${String(m.p50).padStart(4)} ms   p99 ${String(m.p99).padStart(4)} ms${m.failures ? `   (${m.failures} failed)` : ''}`;
}

/** One machine-readable line per result. */
export function jsonLine(bench: string, m: Measured, date: string): string {
  return JSON.stringify({ bench, name: m.name, rps: Math.round(m.rps), p50: m.p50, p99: m.p99, failures: m.failures, date });
}

/** Sum of a Prometheus metric's samples (optionally only lines containing `label`) at `opsUrl`. */
export async function metricSum(opsUrl: string, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name) && l.includes(label))
    .reduce((n, l) => n + Number(l.split(/\s+/).at(-1)), 0);
}
