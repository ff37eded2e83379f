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

// Names an object or array answers to without owning them: such keys take the checked path.
const PROTOTYPE_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)]);
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

/**
 * The whole lookup of a path as one generated function, so that every step has its own inline
 * cache: closures made from one function literal share theirs, and a lookup shared by all the
 * paths of a policy goes megamorphic (about 40% of an evaluation). Same semantics as the step
 * getters above, step for step. Keys enter the source only as JSON string literals. Returns null
 * where code generation from strings is disabled; the caller then loops over the step getters.
 */
function generatedGet(
  candidates: readonly (readonly string[])[],
  fromIts: boolean,
  fail: (i: number) => Missing,
): ((ctx: EvalContext) => unknown) | null {
  const lines = [`let v = ${fromIts ? 'ctx.its' : 'ctx.data'}, w;`];
  candidates.forEach((keys, i) => {
    const lit = keys.map((k) => JSON.stringify(k));
    if (keys.some((k) => PROTOTYPE_KEYS.has(k) || INDEX_LIKE.test(k))) {
      lines.push(`if (typeof v !== 'object' || v === null || Array.isArray(v)) return fail(${i});`);
      lines.push(`${lit.map((k) => `if (Object.hasOwn(v, ${k})) w = v[${k}];`).join(' else ')} else return fail(${i});`);
      lines.push(`if (w === undefined) return fail(${i});`);
    } else {
      lines.push(`if (typeof v !== 'object' || v === null) return fail(${i});`);
      lines.push(`if (${lit.map((k) => `(w = v[${k}]) === undefined`).join(' && ')}) return fail(${i});`);
    }
    lines.push('v = w;');
  });
  lines.push('return v;');
  try {
    return new Function('fail', `return function get(ctx) {\n${lines.join('\n')}\n};`)(fail) as (ctx: EvalContext) => unknown;
  } catch {
    return null;
  }
}

export function compilePath(path: Path, mode: LookupMode): CompiledPath {
  const steps = path.steps;
  const candidates = steps.map((s) => keyCandidates(s.name));
  const getters = candidates.map(stepGetter);
  const jsonKeys = candidates.map((keys) => keys.map(jsonKey));
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

  const get: CompiledPath['get'] =
    n === 0
      ? (ctx) => ctx.its
      : (generatedGet(candidates, fromIts, fail) ??
        ((ctx) => {
          let v: unknown = fromIts ? ctx.its : ctx.data;
          for (let i = 0; i < n; i++) {
            v = getters[i]!(v);
            if (v === undefined) return fail(i);
          }
          return v;
        }));

  const getTraced: CompiledPath['getTraced'] = (ctx) => {
    let v: unknown = fromIts ? ctx.its : ctx.data;
    let jsonPath = fromIts ? ctx.itsPath : '$';
    for (let i = 0; i < n; i++) {
      const next = getters[i]!(v);
      if (next === undefined) return { value: fail(i), jsonPath: `${jsonPath}.${steps[i]!.name}` };
      const keys = candidates[i]!;
      const j = keys.findIndex((k) => Object.hasOwn(v as object, k));
      jsonPath += jsonKeys[i]![j < 0 ? 0 : j];
      v = next;
    }
    return { value: v, jsonPath };
  };

  return { get, getTraced, written: `$.${[...prefix, ...steps.map((s) => s.name)].join('.')}` };
}
