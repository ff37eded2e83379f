import { describe, expect, it } from 'vitest';
import { RUN_DEFAULTS, runOptionsOf } from '../src/index.js';

describe('runOptionsOf: what a door forwards for a run body', () => {
  it('applies the trace default and leaves flags out when the body sets none', () => {
    expect(runOptionsOf('r1', {})).toEqual({ requestId: 'r1', trace: RUN_DEFAULTS.trace });
  });

  it('carries `trace: false` and the flags the body sets, false ones included', () => {
    expect(runOptionsOf('r2', { trace: false, reasons: true })).toEqual({ requestId: 'r2', trace: false, flags: { reasons: true } });
    expect(runOptionsOf('r3', { reasons: false })).toEqual({ requestId: 'r3', trace: RUN_DEFAULTS.trace, flags: { reasons: false } });
  });
});
