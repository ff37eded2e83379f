import { MASKED } from '@arbiter/contracts';

/** Whether a replay read a masked value (set by the getters {@link watchMasked} puts in place). */
export interface MaskedReads {
  read: boolean;
}

/**
 * Replays (impact analysis): every `"***"` value of the parsed data becomes a getter that notes it
 * was read, so an evaluation whose outcome depended on a masked value (a schema check, a rule, a
 * flow's table cell reading it) is told apart from one that never looked. `seen` is shared when
 * several evaluations of one replay (a flow's nodes) watch their own copies of the data.
 */
export function watchMasked(data: unknown, seen: MaskedReads = { read: false }): MaskedReads {
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const obj = node as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      const value = obj[key];
      if (value === MASKED) {
        Object.defineProperty(obj, key, {
          enumerable: true,
          configurable: true,
          get() {
            seen.read = true;
            return MASKED;
          },
        });
      } else walk(value);
    }
  };
  walk(data);
  return seen;
}
