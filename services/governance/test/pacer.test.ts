import { describe, expect, it } from 'vitest';
import { Pacer } from '../src/pacer.js';

/** A pacer on a clock the test moves: each wait it asks for is recorded and advances the clock. */
function pacedClock(perSecond: number) {
  let now = 1000;
  const waits: number[] = [];
  const pacer = new Pacer(
    perSecond,
    () => now,
    async (ms) => {
      waits.push(ms);
      now += ms;
    },
  );
  return { pacer, waits, advance: (ms: number) => (now += ms) };
}

describe('Pacer', () => {
  it('spaces takes evenly: n units start n / perSecond seconds after the previous take', async () => {
    const { pacer, waits } = pacedClock(4000);
    for (let i = 0; i < 5; i++) await pacer.take(50);
    // 50 units at 4,000 a second: 12.5 ms apart, the first at once.
    expect(waits).toEqual([12.5, 12.5, 12.5, 12.5]);
  });

  it('does not make up for time the work itself lost: no burst after a slow step', async () => {
    const { pacer, waits, advance } = pacedClock(1000);
    await pacer.take(10); // due at once; the next at +10 ms
    advance(50); // the work took 50 ms
    await pacer.take(10); // late: starts at once, the next 10 ms after it
    await pacer.take(10);
    expect(waits).toEqual([10]);
  });

  it('skips waits shorter than a timer can keep, and 0 means unpaced', async () => {
    const fine = pacedClock(1_000_000);
    for (let i = 0; i < 3000; i++) await fine.pacer.take(1);
    // 1 µs apart each: nothing waits until the schedule is 1 ms ahead of the clock, then it waits
    // that long, twice over 3 ms of work.
    expect(fine.waits).toHaveLength(2);
    expect(fine.waits.every((ms) => ms >= 1 && ms < 1.01)).toBe(true);
    const off = pacedClock(0);
    for (let i = 0; i < 100; i++) await off.pacer.take(1000);
    expect(off.waits).toEqual([]);
  });
});
