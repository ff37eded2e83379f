import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines } from '../src/workers/deadlines.js';

describe('Deadlines', () => {
  let deadlines: Deadlines;

  beforeEach(() => {
    vi.useFakeTimers();
    deadlines = new Deadlines(1000, () => Date.now());
  });

  afterEach(() => {
    deadlines.close();
    vi.useRealTimers();
  });

  it('aborts a task still running at its deadline, and only then', () => {
    const signal = deadlines.start();
    const onAbort = vi.fn();
    signal.addEventListener('abort', onAbort);
    vi.advanceTimersByTime(999);
    expect([signal.aborted, onAbort.mock.calls.length]).toEqual([false, 0]);
    vi.advanceTimersByTime(1);
    expect([signal.aborted, onAbort.mock.calls.length]).toEqual([true, 1]);
    expect(signal.reason).toBeInstanceOf(Error);
  });

  it('never aborts a settled task', () => {
    const signal = deadlines.start();
    const onAbort = vi.fn();
    signal.addEventListener('abort', onAbort);
    signal.settle();
    vi.advanceTimersByTime(5000);
    expect([signal.aborted, onAbort.mock.calls.length]).toEqual([false, 0]);
  });

  it('gives each task its own deadline, counted from its start', () => {
    const first = deadlines.start();
    vi.advanceTimersByTime(400);
    const second = deadlines.start();
    vi.advanceTimersByTime(600);
    expect([first.aborted, second.aborted]).toEqual([true, false]);
    vi.advanceTimersByTime(399);
    expect(second.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(second.aborted).toBe(true);
  });

  it('skips settled tasks ahead of a running one', () => {
    const signals = Array.from({ length: 3000 }, () => deadlines.start());
    signals.forEach((s, i) => i !== 2999 && s.settle());
    vi.advanceTimersByTime(1000);
    expect(signals.filter((s) => s.aborted)).toEqual([signals[2999]]);
  });

  it('keeps working after its queue drained', () => {
    deadlines.start().settle();
    vi.advanceTimersByTime(1000);
    const later = deadlines.start();
    vi.advanceTimersByTime(1000);
    expect(later.aborted).toBe(true);
  });

  it('a removed listener is not called', () => {
    const signal = deadlines.start();
    const onAbort = vi.fn();
    signal.addEventListener('abort', onAbort);
    signal.removeEventListener('abort', onAbort);
    vi.advanceTimersByTime(1000);
    expect([signal.aborted, onAbort.mock.calls.length]).toEqual([true, 0]);
  });

  it('stops expiring once closed', () => {
    const signal = deadlines.start();
    deadlines.close();
    vi.advanceTimersByTime(5000);
    expect(signal.aborted).toBe(false);
  });

  it('gives a task its own time-out when asked: a shorter one handed out later expires first, with one timer for all', () => {
    const before = vi.getTimerCount();
    const long = deadlines.start(3000);
    const short = deadlines.start(500);
    const usual = deadlines.start();
    expect(vi.getTimerCount() - before).toBe(1);
    vi.advanceTimersByTime(500);
    expect([short.aborted, usual.aborted, long.aborted]).toEqual([true, false, false]);
    vi.advanceTimersByTime(500);
    expect([usual.aborted, long.aborted]).toEqual([true, false]);
    vi.advanceTimersByTime(2000);
    expect(long.aborted).toBe(true);
  });
});
