import { describe, expect, it } from 'vitest';
import { principals, rejectionOf, streamMessages, type StreamReader } from '../src/index.js';

class Expected extends Error {}
const isExpected = (err: unknown): err is Expected => err instanceof Expected;

describe('rejectionOf', () => {
  it('returns the error a promise rejects with when the predicate knows it', async () => {
    const err = new Expected('no');
    expect(await rejectionOf(Promise.reject(err), isExpected)).toBe(err);
  });

  it('rethrows any other error, and fails a fulfilled promise naming what was expected to fail', async () => {
    const other = new Error('other');
    await expect(rejectionOf(Promise.reject(other), isExpected)).rejects.toBe(other);
    await expect(rejectionOf(Promise.resolve(1), isExpected, '`registry.policy.get`')).rejects.toThrow(
      'expected `registry.policy.get` to fail',
    );
  });
});

describe('principals', () => {
  it('makes callers of org acme whose user id is the role, unless told otherwise', () => {
    const as = principals<'viewer' | 'admin', 'view'>();
    expect(as('viewer')).toEqual({ orgId: 'acme', userId: 'viewer', role: 'viewer' });
    expect(as('admin', { orgId: 'globex', userId: 'ann', scopes: ['view'] })).toEqual({
      orgId: 'globex',
      userId: 'ann',
      role: 'admin',
      scopes: ['view'],
    });
  });
});

describe('streamMessages', () => {
  /** A stream holding `messages` at sequences from `first`, `gaps` deleted. */
  function reader(first: number, messages: string[], gaps: number[] = []): StreamReader<string> {
    return {
      streams: {
        info: async () => ({
          state: { first_seq: first, last_seq: first + messages.length - 1, messages: messages.length - gaps.length },
        }),
        getMessage: async (_stream, { seq }) => {
          if (gaps.includes(seq)) throw new Error('no message found');
          return messages[seq - first] ?? null;
        },
      },
    };
  }

  it('reads every message oldest first, skipping deleted sequences', async () => {
    expect(await streamMessages(reader(5, ['a', 'b', 'c']), 'S')).toEqual(['a', 'b', 'c']);
    expect(await streamMessages(reader(5, ['a', 'b', 'c'], [6]), 'S')).toEqual(['a', 'c']);
  });

  it('reads nothing from an empty stream', async () => {
    expect(
      await streamMessages(
        { streams: { ...reader(1, []).streams, info: async () => ({ state: { first_seq: 1, last_seq: 0, messages: 0 } }) } },
        'S',
      ),
    ).toEqual([]);
  });
});
