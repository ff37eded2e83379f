import { describe, expect, it } from 'vitest';
import { validate } from '../src/index.js';

describe('positions after a lone carriage return', () => {
  it('count lines at line feeds only, as the parser does', () => {
    expect(validate('A **x** is ok\r\n  if x.a == 1\rnd x.tier is "gold".\r\n').error).toBe(
      'Parse error: line 2, column 15: unexpected `nd`: expected `.`',
    );
  });
});
