/**
 * CPU time of the processes that serve a benchmark's requests, read from `/proc/<pid>/stat`
 * (user + system time of the whole process, every thread included) before and after a measured
 * window: what a platform team pays per answered request, summed over gateway, execution (with its
 * worker threads), nats-server and redis-server. Linux only; elsewhere the figures are absent.
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

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

/** The resolution of the figures: one clock tick, in µs. */
export const CPU_TICK_US = 1_000_000 / CLOCK_TICKS;
