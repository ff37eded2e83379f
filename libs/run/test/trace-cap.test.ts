import { describe, expect, it } from 'vitest';
import { capTrace } from '../src/index.js';

describe('capTrace', () => {
  it('returns a trace within the limit unchanged', () => {
    const trace = ['a', 'b'];
    expect(capTrace(trace, 100)).toBe(trace);
  });

  it('keeps the lines that fit, a marker naming what was cut and the limit, and the last line (result or error)', () => {
    const trace = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, '0')}`);
    const capped = capTrace(trace, 120);
    expect(capped.slice(0, -2)).toEqual(trace.slice(0, 9));
    expect(capped.at(-2)).toBe('… trace cut: 90 more lines (a trace is limited to 120 bytes)');
    expect(capped.at(-1)).toBe('line 099');
  });
});
