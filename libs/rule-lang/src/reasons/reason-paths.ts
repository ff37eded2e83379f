/**
 * Path lookups for reasons: the value, as compile/paths.ts finds it (the same keys, the same
 * failures), and the data path with the JSON keys found (`applicant.dateOfBirth`), whose text is
 * made once per combination of keys a path meets rather than per lookup.
 */

import { MISSING, type EvalContext } from '../evaluate/context.js';
import { jsonKey, type PathPlan } from '../compile/paths.js';

/** A path of reasons: `get` looks the value up; `path` is the data path of the last `get`. */
export interface ReasonPath {
  get(ctx: EvalContext): unknown;
  /** The data path of the last lookup (for an `its` path: after `ctx.itsPath`). */
  path(ctx: EvalContext): string;
}

/** `.k` → `k` at the start of a data path (a bracketed key stays as it is). */
function bare(path: string): string {
  return path.startsWith('.') ? path.slice(1) : path;
}

/** Compiles a planned path for reasons. */
export function reasonPath(plan: PathPlan): ReasonPath {
  const { fromIts, steps } = plan;
  const n = steps.length;
  const keys = steps.map((s) => s.keys);
  const checked = steps.map((s) => s.checked);
  const jsonKeys = keys.map((ks) => ks.map(jsonKey));
  // Which candidate each step used, two bits a step (at most three candidates, §4.4), of the last lookup.
  let variant = 0;
  const texts = new Map<number, string>();
  const textOf = (v: number): string => {
    let text = texts.get(v);
    if (text === undefined) {
      text = '';
      for (let i = n - 1, rest = v; i >= 0; i--, rest >>>= 2) text = jsonKeys[i][rest & 3] + text;
      if (texts.size < 64) texts.set(v, text);
    }
    return text;
  };
  const first = textOf(0);
  const firstBare = bare(first);

  const get = (ctx: EvalContext): unknown => {
    let o: unknown = fromIts ? ctx.its : ctx.data;
    let used = 0;
    for (let i = 0; i < n; i++) {
      const ks = keys[i];
      let next: unknown = undefined;
      let j = 0;
      if (typeof o === 'object' && o !== null && !(checked[i] && Array.isArray(o))) {
        const r = o as Record<string, unknown>;
        for (; j < ks.length; j++) {
          if (checked[i] ? Object.hasOwn(r, ks[j]) : r[ks[j]] !== undefined) {
            next = r[ks[j]];
            break;
          }
        }
      }
      if (next === undefined) {
        variant = -1;
        const s = steps[i];
        if (s.lenient) return MISSING;
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- a prebuilt sentinel, caught by the evaluator
        throw s.failure;
      }
      used = (used << 2) | j;
      o = next;
    }
    variant = used;
    return o;
  };
  const written = bare(plan.written.slice(1));
  const path = (ctx: EvalContext): string => {
    if (variant < 0) return written;
    if (fromIts) return variant === 0 ? ctx.itsPath + first : ctx.itsPath + textOf(variant);
    return variant === 0 ? firstBare : bare(textOf(variant));
  };
  return { get, path };
}
