/** Compiled path lookups (LANGUAGE.md §4): exact → camelCase → snake_case, own keys of objects only. */

import type { Path } from '../ast/types.js';
import { MISSING, type EvalContext, type Missing } from '../evaluate/context.js';
import { EvalFailure } from '../evaluate/failure.js';
import { keyCandidates } from './names.js';

/** How a lookup treats absent data. */
export type LookupMode =
  /** Absent selector or property → EvalFailure. */
  | 'strict'
  /** Absent anything → MISSING (`if present`). */
  | 'lenient'
  /** Absent property → MISSING, absent selector → EvalFailure (`is empty`, §7.3.7). */
  | 'empty';

type StepGetter = (o: unknown) => unknown;

// Names an object or array answers to without owning them: such keys take the checked path.
const PROTOTYPE_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)]);
const INDEX_LIKE = /^(?:\d+|length)$/;

/**
 * Getter for one step. Keys that no plain object inherits and no JSON array answers to can be
 * read directly (`o[k]` is then undefined exactly when `k` is not an own key); the rest need
 * `Object.hasOwn` and an array check.
 */
function stepGetter(step: PlannedStep): StepGetter {
  const keys = step.keys;
  if (step.checked) {
    return (o) => {
      if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
      for (const k of keys) if (Object.hasOwn(o, k)) return (o as Record<string, unknown>)[k];
      return undefined;
    };
  }
  const [k0, k1, k2] = keys as [string, string?, string?];
  if (k1 === undefined) {
    return (o) => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k0] : undefined);
  }
  if (k2 === undefined) {
    return (o) => {
      if (typeof o !== 'object' || o === null) return undefined;
      const v = (o as Record<string, unknown>)[k0];
      return v !== undefined ? v : (o as Record<string, unknown>)[k1];
    };
  }
  return (o) => {
    if (typeof o !== 'object' || o === null) return undefined;
    const r = o as Record<string, unknown>;
    const v = r[k0];
    if (v !== undefined) return v;
    const w = r[k1];
    return w !== undefined ? w : r[k2];
  };
}

/** A compiled path: a fast getter and a tracing one that also reports the JSON keys used. */
export interface CompiledPath {
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- `Missing` named for the reader
  get: (ctx: EvalContext) => unknown | Missing;
  /** Same lookup, also returning the JSON path actually followed (trace mode only). */
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- `Missing` named for the reader
  getTraced: (ctx: EvalContext) => { value: unknown | Missing; jsonPath: string };
  /** `$.` + written steps joined by `.` (explain, trace of unresolved paths). */
  written: string;
}

/** How key `k` is written in a JSON path of the trace: `.k` when an identifier, else `["k"]`. */
export function jsonKey(k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
}

/** One step of a planned path: the keys to try, how absence is treated, what to throw. */
export interface PlannedStep {
  /** The name as written (trace of an unresolved path). */
  name: string;
  /** JSON keys to try, in order (exact, camelCase, snake_case). */
  keys: readonly string[];
  /**
   * True when a key is named like an Object/Array prototype member or is index-like: the step
   * then needs `Object.hasOwn` and an array check instead of a plain read.
   */
  checked: boolean;
  /** Absence gives MISSING instead of throwing `failure`. */
  lenient: boolean;
  failure: EvalFailure;
}

/** Everything a lookup needs, computed once per path and shared by the closures and the generated evaluator. */
export interface PathPlan {
  fromIts: boolean;
  steps: readonly PlannedStep[];
  /** `$.` + written steps joined by `.` (explain, trace of unresolved paths). */
  written: string;
}

/** Plans the lookup of `path` in `mode`: key candidates and the failure of each step (LANGUAGE.md §4, §9.1). */
export function planPath(path: Path, mode: LookupMode, candidates: (name: string) => readonly string[] = keyCandidates): PathPlan {
  const fromIts = path.root === 'its';
  const prefix = fromIts ? ['its'] : [];
  const steps = path.steps.map((s, i): PlannedStep => {
    const keys = candidates(s.name);
    // Messages name the path as written up to the failing step (LANGUAGE.md §9.1).
    const written = [...prefix, ...path.steps.slice(0, i + 1).map((x) => x.name)].join('.');
    const code = s.kind === 'selector' ? 'missing_selector' : 'missing_property';
    const message = `${s.kind === 'selector' ? 'Missing selector' : 'Missing property'}: ${written}`;
    return {
      name: s.name,
      keys,
      checked: keys.some((k) => PROTOTYPE_KEYS.has(k) || INDEX_LIKE.test(k)),
      lenient: mode === 'lenient' || (mode === 'empty' && s.kind === 'property'),
      failure: new EvalFailure(code, message),
    };
  });
  return { fromIts, steps, written: `$.${[...prefix, ...path.steps.map((s) => s.name)].join('.')}` };
}

/**
 * Compiles a planned path to closures: `getTraced` serves trace mode; `get` serves the closure
 * evaluator, which runs without trace only where code generation is unavailable (the generated
 * evaluator of codegen.ts inlines its own lookups, which replaced the per-path `new Function`
 * that used to live here: one generated function per policy instead of one per path).
 */
export function compilePath(plan: PathPlan): CompiledPath {
  const { fromIts, steps } = plan;
  const getters = steps.map(stepGetter);
  const jsonKeys = steps.map((s) => s.keys.map(jsonKey));
  const n = getters.length;

  const fail = (i: number): Missing => {
    const s = steps[i];
    if (s.lenient) return MISSING;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- a prebuilt sentinel, caught by the evaluator: no stack on the hot path
    throw s.failure;
  };

  const get: CompiledPath['get'] =
    n === 0
      ? (ctx) => ctx.its
      : (ctx) => {
          let v: unknown = fromIts ? ctx.its : ctx.data;
          for (let i = 0; i < n; i++) {
            v = getters[i](v);
            if (v === undefined) return fail(i);
          }
          return v;
        };

  // JSON path of the usual lookup, where every step found its first candidate key: precomputed
  // (whole, for `$` paths; as the suffix after the element's path, for `its` paths).
  const firstKeys = jsonKeys.map((keys) => keys[0]).join('');
  const firstPath = `$${firstKeys}`;
  const getTraced: CompiledPath['getTraced'] = (ctx) => {
    let v: unknown = fromIts ? ctx.its : ctx.data;
    const root = fromIts ? ctx.itsPath : '$';
    // jsonPath stays null while every step used its first candidate (then it is root + firstKeys).
    let jsonPath: string | null = null;
    for (let i = 0; i < n; i++) {
      const next = getters[i](v);
      if (next === undefined) {
        const before =
          jsonPath ??
          root +
            jsonKeys
              .slice(0, i)
              .map((keys) => keys[0])
              .join('');
        return { value: fail(i), jsonPath: `${before}.${steps[i].name}` };
      }
      const keys = steps[i].keys;
      // The JSON key shown is the first candidate that is an own key (with one candidate: that one).
      let j = 0;
      if (keys.length > 1) {
        j = keys.findIndex((k) => Object.hasOwn(v as object, k));
        if (j < 0) j = 0;
      }
      if (j !== 0 && jsonPath === null)
        jsonPath =
          root +
          jsonKeys
            .slice(0, i)
            .map((keys) => keys[0])
            .join('');
      if (jsonPath !== null) jsonPath += jsonKeys[i][j];
      v = next;
    }
    return { value: v, jsonPath: jsonPath ?? (fromIts ? root + firstKeys : firstPath) };
  };
  return { get, getTraced, written: plan.written };
}
