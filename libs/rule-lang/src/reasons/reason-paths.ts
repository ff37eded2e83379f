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

/**
 * The text of the JSON keys a lookup of `plan` used, from its variant: the candidate of each step,
 * two bits a step, the last step in the lowest bits (as `(used << 2) | j` builds it, step by step,
 * in 32 bits). Made once per variant met (at most 64 kept).
 */
function keyTexts(plan: PathPlan): (variant: number) => string {
  const n = plan.steps.length;
  const jsonKeys = plan.steps.map((s) => s.keys.map(jsonKey));
  const texts = new Map<number, string>();
  return (v) => {
    let text = texts.get(v);
    if (text === undefined) {
      text = '';
      for (let i = n - 1, rest = v; i >= 0; i--, rest >>>= 2) text = jsonKeys[i][rest & 3] + text;
      if (texts.size < 64) texts.set(v, text);
    }
    return text;
  };
}

/** Whether every lookup of `plan` has variant 0: one candidate a step, no lenient step (so no -1). */
export function fixedVariant(plan: PathPlan): boolean {
  return plan.steps.every((s) => s.keys.length === 1 && !s.lenient);
}

/**
 * The data path of a lookup of `plan` from its variant (-1: stopped at a lenient step) and, for an
 * `its` path, the data path of the element: exactly what {@link reasonPath}'s `path` returns after
 * the same lookup. For the generated reasons evaluator (compile/codegen-reasons.ts), which records
 * the variant only and writes the path once the run is over.
 */
export function reasonPathText(plan: PathPlan): (variant: number, itsPath: string) => string {
  const textOf = keyTexts(plan);
  const written = bare(plan.written.slice(1));
  if (plan.fromIts) return (variant, itsPath) => (variant < 0 ? written : itsPath + textOf(variant));
  return (variant) => (variant < 0 ? written : bare(textOf(variant)));
}

/**
 * The contribution of candidate `j` at step `index` of `steps` to a variant, as `(used << 2) | j`
 * leaves it in 32 bits (0 for a step more than 15 from the end: its bits are shifted out).
 */
export function variantBits(steps: number, index: number, j: number): number {
  const shift = 2 * (steps - 1 - index);
  return shift >= 32 ? 0 : (j << shift) | 0;
}

/** Compiles a planned path for reasons. */
export function reasonPath(plan: PathPlan): ReasonPath {
  const { fromIts, steps } = plan;
  const n = steps.length;
  const keys = steps.map((s) => s.keys);
  const checked = steps.map((s) => s.checked);
  // Which candidate each step used, two bits a step (at most three candidates, §4.4), of the last lookup.
  let variant = 0;
  const textOf = keyTexts(plan);
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
