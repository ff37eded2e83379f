/** What a local run checks of its data before evaluating: the service's refusals that concern the data's meaning. */

import { isArbiterError } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { checkData } from '../src/local/limits.js';

function refusal(data: unknown) {
  try {
    checkData(data);
    return null;
  } catch (err) {
    if (!isArbiterError(err)) throw err;
    return { status: err.status, code: err.code, detail: err.message, errors: err.errors };
  }
}

describe('checkData', () => {
  it('refuses an unpaired surrogate in a string or a key with the service 400 unpaired_surrogate and its path', () => {
    const message = 'text must not contain an unpaired UTF-16 surrogate (`\\ud800`–`\\udfff` alone)';
    expect(refusal({ x: { s: '😀', t: ['a', '\ude00'] } })).toEqual({
      status: 400,
      code: 'validation_failed',
      detail: `request body is invalid: \`body.x.t.1\`: ${message}`,
      errors: [{ code: 'unpaired_surrogate', message, path: 'body.x.t.1' }],
    });
    expect(refusal({ x: { '\ud800': 1 } })?.errors).toEqual([{ code: 'unpaired_surrogate', message, path: 'body.x' }]);
  });

  it('accepts well-formed pairs, and data nested deeper than any stack', () => {
    expect(refusal({ x: { s: '😀 𝐀' } })).toBeNull();
    let deep: unknown = { s: 'a' };
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    expect(refusal({ deep })).toBeNull();
  });

  it('still refuses data that is not an object', () => {
    expect(refusal([1])).toMatchObject({ status: 400, code: 'validation_failed' });
  });
});
