/**
 * CPU time of the processes that serve a benchmark's requests, read from `/proc/<pid>/stat`
 * (user + system time of the whole process, every thread included) before and after a measured
 * window: what a platform team pays per answered request, summed over gateway, execution (with its
 * worker threads), nats-server and redis-server. Linux only; elsewhere the figures are absent.
 */

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`, 100 on Linux). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU time of `pid` in microseconds; undefined when it cannot be read. */
export function cpuMicros(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last `)`.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? (ticks * 1_000_000) / CLOCK_TICKS : undefined;
}

/** A Node process's CPU time (µs) by kind of thread: its main thread, its worker threads, and the rest (V8's GC and compiler helpers, libuv's pool). */
export interface ThreadCpu {
  main: number;
  workers: number;
  other: number;
}

/** Ticks of one `/proc/…/stat` line's utime + stime. */
function ticksOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * `pid`'s CPU time split by thread kind, from `/proc/<pid>/task/<tid>/stat` and each thread's name
 * (`MainThread`, `WorkerThread` for worker_threads); undefined when it cannot be read. Threads that
 * ended between two readings are missing from the later one: compare with {@link cpuMicros}.
 */
export function threadCpuMicros(pid: number): ThreadCpu | undefined {
  const split: ThreadCpu = { main: 0, workers: 0, other: 0 };
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const dir = `/proc/${pid}/task/${tid}`;
      const name = readFileSync(`${dir}/comm`, 'utf8').trim();
      const us = (ticksOf(readFileSync(`${dir}/stat`, 'utf8')) * 1_000_000) / CLOCK_TICKS;
      if (name === 'MainThread' || Number(tid) === pid) split.main += us;
      else if (name === 'WorkerThread') split.workers += us;
      else split.other += us;
    }
  } catch {
    return undefined;
  }
  return split;
}

/** The resolution of the figures: one clock tick, in µs. */
export const CPU_TICK_US = 1_000_000 / CLOCK_TICKS;
