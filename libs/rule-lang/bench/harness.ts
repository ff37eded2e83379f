/**
 * Timing helpers: warm up, calibrate the iteration count, then take several timed samples and
 * report the median ns/op. Each loop counts the operations that gave the expected answer; the
 * count is checked after each timed batch, so the work can't be optimised away and a wrong answer
 * fails the run.
 *
 * Time is the CPU time of this process (all its threads: the garbage collector's and compiler's
 * work counts), not wall-clock time: on a machine shared with other work, a wall-clock sample also
 * counts the time the process waited for a core, which varies from sample to sample (medians
 * moved by 2–5× between runs of the same code under load). CPU time is also what the project
 * counts as cost. The wall-clock median is kept beside it.
 */

export interface Measurement {
  name: string;
  /** Median CPU ns per operation over the samples. */
  nsPerOp: number;
  /** Fastest and slowest sample (CPU ns/op), to show the noise. */
  minNsPerOp: number;
  maxNsPerOp: number;
  /** Median wall-clock ns per operation over the same samples. */
  wallNsPerOp: number;
  /** Operations timed in total (all samples). */
  ops: number;
  samples: number;
}

export interface MeasureOptions {
  /** Target time of the whole measurement (all samples), ms. */
  totalMs?: number;
  samples?: number;
  /** Warm-up time, ms. */
  warmupMs?: number;
}

/** CPU time of this process so far, ns (process.cpuUsage: microseconds, from the kernel's exact accounting). */
export function cpuNs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}

const wallNs = (): number => Number(process.hrtime.bigint());

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function check(name: string, ok: number, n: number): void {
  if (ok !== n) throw new Error(`${name}: ${n - ok} of ${n} runs gave the wrong answer`);
}

function summarise(name: string, perSample: number, nsPerOp: number[], wallNsPerOp: number[]): Measurement {
  return {
    name,
    nsPerOp: median(nsPerOp),
    minNsPerOp: Math.min(...nsPerOp),
    maxNsPerOp: Math.max(...nsPerOp),
    wallNsPerOp: median(wallNsPerOp),
    ops: perSample * nsPerOp.length,
    samples: nsPerOp.length,
  };
}

/** One contestant of {@link measureInterleaved}. */
export interface Contestant {
  name: string;
  /** Runs the operation `n` times (awaiting each, if async); returns how many gave the expected answer. */
  loop: (n: number) => number | Promise<number>;
}

/** Runs `n` operations of `c`; the CPU and wall-clock ns they took. */
async function runLoop(c: Contestant, n: number): Promise<{ cpu: number; wall: number }> {
  const w0 = wallNs();
  const c0 = cpuNs();
  let ok = c.loop(n);
  if (typeof ok !== 'number') ok = await ok;
  const cpu = cpuNs() - c0;
  const wall = wallNs() - w0;
  check(c.name, ok, n);
  return { cpu, wall };
}

/**
 * Measures several implementations in interleaved rounds (A B C A B C …), so that load from other
 * processes on a shared machine hits all of them alike and their ratios stay meaningful. Each gets
 * a warm-up that also calibrates its batch size, then `samples` timed batches of ~totalMs/samples.
 */
export async function measureInterleaved(contestants: readonly Contestant[], opts: MeasureOptions = {}): Promise<Measurement[]> {
  const { totalMs = 700, samples = 9, warmupMs = 200 } = opts;
  const perSample: number[] = [];
  for (const c of contestants) {
    let n = 1;
    let spent = 0;
    let guess: number;
    for (;;) {
      const dt = (await runLoop(c, n)).cpu / 1e6;
      spent += dt;
      guess = (dt * 1e6) / n;
      if (dt >= 20 && spent >= warmupMs) break;
      if (dt < 20) n *= 2;
    }
    perSample.push(Math.max(1, Math.round(((totalMs / samples) * 1e6) / guess)));
  }
  const cpu: number[][] = contestants.map(() => []);
  const wall: number[][] = contestants.map(() => []);
  for (let s = 0; s < samples; s++) {
    for (let i = 0; i < contestants.length; i++) {
      const t = await runLoop(contestants[i], perSample[i]);
      cpu[i].push(t.cpu / perSample[i]);
      wall[i].push(t.wall / perSample[i]);
    }
  }
  return contestants.map((c, i) => summarise(c.name, perSample[i], cpu[i], wall[i]));
}

/** Times single calls of `fn` (e.g. a compile) `runs` times after `warmup` untimed calls; CPU ns per call each. */
export function timeRuns<T>(fn: () => T, runs: number, warmup: number, verify: (value: T) => void): { first: number; runs: number[] } {
  const t0 = cpuNs();
  verify(fn());
  const first = cpuNs() - t0;
  for (let i = 0; i < warmup; i++) verify(fn());
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = cpuNs();
    const value = fn();
    times.push(cpuNs() - t);
    verify(value);
  }
  return { first, runs: times };
}

/** `1234.5` → `1,234.5 ns`, `1.2 µs`, `3.4 ms` for the table. */
export function formatNs(ns: number): string {
  if (ns < 1_000) return `${ns.toFixed(1)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(2)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

/** A plain-text table with right-aligned numeric columns. */
export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
