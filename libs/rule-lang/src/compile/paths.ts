/** Compiled path lookups (LANGUAGE.md §4): exact → camelCase → snake_case, own keys of objects only. */

import type { Path } from '../ast/types.js';
import { EvalFailure, MISSING, type EvalContext, type Missing } from './context.js';
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

const PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));
const INDEX_LIKE = /^(?:\d+|length)$/;

/**
 * Getter for one step. Keys that no plain object inherits and no JSON array answers to can be
 * read directly (`o[k]` is then undefined exactly when `k` is not an own key); the rest need
 * `Object.hasOwn` and an array check.
 */
function stepGetter(keys: readonly string[]): StepGetter {
  if (keys.some((k) => PROTOTYPE_KEYS.has(k) || INDEX_LIKE.test(k))) {
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
  get: (ctx: EvalContext) => unknown | Missing;
  /** Same lookup, also returning the JSON path actually followed (trace mode only). */
  getTraced: (ctx: EvalContext) => { value: unknown | Missing; jsonPath: string };
  /** `$.` + written steps joined by `.` (explain, trace of unresolved paths). */
  written: string;
}

function jsonKey(k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
}

export function compilePath(path: Path, mode: LookupMode): CompiledPath {
  const steps = path.steps;
  const candidates = steps.map((s) => keyCandidates(s.name));
  const getters = candidates.map(stepGetter);
  const fromIts = path.root === 'its';
  const prefix = fromIts ? ['its'] : [];
  // Messages name the path as written up to the failing step (LANGUAGE.md §9.1).
  const failures = steps.map((s, i) => {
    const written = [...prefix, ...steps.slice(0, i + 1).map((x) => x.name)].join('.');
    const code = s.kind === 'selector' ? 'missing_selector' : 'missing_property';
    const message = `${s.kind === 'selector' ? 'Missing selector' : 'Missing property'}: ${written}`;
    const lenient = mode === 'lenient' || (mode === 'empty' && s.kind === 'property');
    return { lenient, failure: new EvalFailure(code, message) };
  });
  const n = getters.length;

  const fail = (i: number): Missing => {
    const f = failures[i]!;
    if (f.lenient) return MISSING;
    throw f.failure;
  };

  let get: CompiledPath['get'];
  if (n === 0) get = (ctx) => ctx.its;
  else if (n === 1 && !fromIts) {
    const g0 = getters[0]!;
    get = (ctx) => {
      const v = g0(ctx.data);
      return v === undefined ? fail(0) : v;
    };
  } else if (n === 2 && !fromIts) {
    const g0 = getters[0]!;
    const g1 = getters[1]!;
    get = (ctx) => {
      const a = g0(ctx.data);
      if (a === undefined) return fail(0);
      const b = g1(a);
      return b === undefined ? fail(1) : b;
    };
  } else {
    get = (ctx) => {
      let v: unknown = fromIts ? ctx.its : ctx.data;
      for (let i = 0; i < n; i++) {
        v = getters[i]!(v);
        if (v === undefined) return fail(i);
      }
      return v;
    };
  }

  const getTraced: CompiledPath['getTraced'] = (ctx) => {
    let v: unknown = fromIts ? ctx.its : ctx.data;
    let jsonPath = fromIts ? ctx.itsPath : '$';
    for (let i = 0; i < n; i++) {
      const next = getters[i]!(v);
      if (next === undefined) return { value: fail(i), jsonPath: `${jsonPath}.${steps[i]!.name}` };
      const used = candidates[i]!.find((k) => Object.hasOwn(v as object, k)) ?? candidates[i]![0]!;
      jsonPath += jsonKey(used);
      v = next;
    }
    return { value: v, jsonPath };
  };

  return { get, getTraced, written: `$.${[...prefix, ...steps.map((s) => s.name)].join('.')}` };
}
