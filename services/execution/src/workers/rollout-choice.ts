import type { RunnableRollout } from '@arbiter/contracts';
import { rolloutChoosesNew } from '@arbiter/run';

const decoder = new TextDecoder();

/**
 * Whether an item (its data's JSON text) gets a rollout's new version: `@arbiter/run`'s choice,
 * the data parsed only when the rollout picks by a data path. Data that does not parse draws per
 * run; the worker answers its error whichever version runs it.
 */
export function choosesNew(rollout: RunnableRollout, item: Uint8Array): boolean {
  if (rollout.by === undefined) return rolloutChoosesNew(rollout, undefined);
  let data: unknown;
  try {
    data = JSON.parse(decoder.decode(item));
  } catch {
    data = undefined;
  }
  return rolloutChoosesNew(rollout, data);
}

/** The choice of each item of `data`, whose item `i` ends at byte `ends[i]` (the items' texts back to back). */
export function choicesOf(rollout: RunnableRollout, data: Uint8Array, ends: readonly number[]): boolean[] {
  let from = 0;
  return ends.map((to) => {
    const item = data.subarray(from, to);
    from = to;
    return choosesNew(rollout, item);
  });
}
