import { eventually } from '@arbiter/test-kit';
import { describe, expect, it } from 'vitest';
import { BatchedWriter, type BatchedWriterOptions } from '../src/lifecycle/index.js';

type Batch = ReadonlyMap<string, number>;

/** A writer of counts whose writes are recorded; `fail` makes the next writes throw; `gate` holds a write until opened. */
function counts(opts: Partial<BatchedWriterOptions<string, number>> = {}) {
  const written: Record<string, number>[] = [];
  const errors: Batch[] = [];
  const state = { fail: false, gate: undefined as Promise<void> | undefined };
  const writer = new BatchedWriter<string, number>({
    flushMs: 60_000,
    onFailure: 'retry',
    onError: (_err, batch) => void errors.push(batch),
    write: async (batch) => {
      await state.gate;
      if (state.fail) throw new Error('store down');
      written.push(Object.fromEntries(batch));
    },
    ...opts,
  });
  const add = (key: string) => writer.note(key, (n) => (n ?? 0) + 1);
  return { writer, written, errors, state, add };
}

describe('BatchedWriter', () => {
  it('merges the notes of a key and writes them all in one write', async () => {
    const { writer, written, add } = counts();
    add('a');
    add('a');
    add('b');
    expect(writer.size).toBe(2);
    await writer.flush();
    expect(written).toEqual([{ a: 2, b: 1 }]);
    expect(writer.size).toBe(0);
    await writer.flush();
    expect(written).toHaveLength(1);
    await writer.close();
  });

  it('writes on its own every flushMs', async () => {
    const { writer, written, add } = counts({ flushMs: 20 });
    add('a');
    await eventually(() => expect(written).toEqual([{ a: 1 }]));
    await writer.close();
  });

  it('keeps a failed batch for the next write (a newer note of a key wins) with onFailure retry', async () => {
    const { writer, written, errors, state } = counts();
    writer.note('a', () => 1);
    writer.note('b', () => 1);
    state.fail = true;
    await writer.flush();
    expect(errors.map((b) => Object.fromEntries(b))).toEqual([{ a: 1, b: 1 }]);
    writer.note('a', () => 7);
    state.fail = false;
    await writer.flush();
    expect(written).toEqual([{ a: 7, b: 1 }]);
    await writer.close();
  });

  it('forgets a failed batch with onFailure drop', async () => {
    const { writer, written, errors, state, add } = counts({ onFailure: 'drop' });
    add('a');
    state.fail = true;
    await writer.flush();
    state.fail = false;
    await writer.flush();
    expect(errors).toHaveLength(1);
    expect(written).toEqual([]);
    await writer.close();
  });

  it('runs one write at a time: calls made during a write share one more write, which has what they noted', async () => {
    const { writer, written, state, add } = counts();
    const gate = Promise.withResolvers<void>();
    state.gate = gate.promise;
    add('a');
    const first = writer.flush();
    add('b');
    const second = writer.flush();
    add('c');
    const third = writer.flush();
    expect(third).toBe(second);
    gate.resolve();
    await Promise.all([first, second]);
    expect(written).toEqual([{ a: 1 }, { b: 1, c: 1 }]);
    await writer.close();
  });

  it('ignores a note for a new key past maxKeys, and still counts the keys it has', async () => {
    const { writer, written, add } = counts({ maxKeys: 2 });
    for (const key of ['a', 'b', 'c', 'a']) add(key);
    await writer.close();
    expect(written).toEqual([{ a: 2, b: 1 }]);
  });

  it('close writes what is left', async () => {
    const { writer, written, add } = counts();
    add('z');
    await writer.close();
    expect(written).toEqual([{ z: 1 }]);
  });
});
