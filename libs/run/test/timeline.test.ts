import { describe, expect, it } from 'vitest';
import { instantOf, timelinePick, timelineUntil } from '../src/index.js';

const tl = [
  { version: 1, recordId: 'r1', from: 1000 },
  { version: 2, recordId: 'r2', from: 5000 },
  { version: 3, recordId: 'r3', from: 3000 },
  { version: 4, recordId: 'r4', from: 5000, rollbackOf: 1 },
];

describe('timelinePick', () => {
  it('answers nothing before the first instant', () => {
    expect(timelinePick(tl, 999)).toBeUndefined();
    expect(timelinePick([], 10)).toBeUndefined();
  });
  it('picks the latest instant at or before the clock', () => {
    expect(timelinePick(tl, 1000)?.version).toBe(1);
    expect(timelinePick(tl, 2999)?.version).toBe(1);
    expect(timelinePick(tl, 3000)?.version).toBe(3);
    expect(timelinePick(tl, 4999)?.version).toBe(3);
  });
  it('prefers the higher version between equal instants', () => {
    expect(timelinePick(tl, 5000)?.version).toBe(4);
    expect(timelinePick(tl, 9e12)?.recordId).toBe('r4');
  });
});

describe('timelineUntil', () => {
  it('ends each entry at the next instant', () => {
    const until = timelineUntil(tl);
    expect(until.get(1)).toBe(3000);
    expect(until.get(3)).toBe(5000);
    expect(until.get(2)).toBe(5000);
    expect(until.get(4)).toBeNull();
  });
});

describe('instantOf', () => {
  it('reads ISO instants and falls back to the given clock', () => {
    expect(instantOf('2026-01-01T00:00:00Z', 5)).toBe(Date.UTC(2026, 0, 1));
    expect(instantOf(undefined, 5)).toBe(5);
    expect(instantOf('nope', 5)).toBeUndefined();
  });
});
