/**
 * What the tests of the generated evaluators (codegen.test.ts, codegen-trace.test.ts) share: the
 * corpus, a compile with code generation disabled (the closure fallback), which evaluator a policy
 * runs on, data variants and a strict comparison of results.
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, vi } from 'vitest';
import type { PolicyEvaluators } from '../../src/evaluate/evaluate.js';
import { compile, isRuleParseError, type CompiledPolicy, type EvaluationResult } from '../../src/index.js';

/** A corpus case, as far as these tests read it. */
export interface Case {
  note: string;
  rule: string;
  data?: unknown;
  now?: string;
}

const casesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'cases');

/** Every corpus case, file by file. */
export const cases: Case[] = readdirSync(casesDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((f) => JSON.parse(readFileSync(path.join(casesDir, f), 'utf8')) as Case[]);

/** The corpus cases whose rule compiles. */
export const compilable: Case[] = cases.filter((c) => {
  try {
    compile(c.rule);
    return true;
  } catch (err) {
    if (isRuleParseError(err)) return false;
    throw err;
  }
});

/** A compiled policy's evaluators (a private field, read for these tests only). */
const evaluatorsOf = (p: CompiledPolicy): PolicyEvaluators => (p as unknown as { evaluators: PolicyEvaluators }).evaluators;

/** Whether the policy runs on the generated no-trace evaluator. */
export const isGenerated = (p: CompiledPolicy): boolean => evaluatorsOf(p).generated !== null;

/** Whether trace mode runs on the generated traced evaluator (generates it if not yet done). */
export const isTraceGenerated = (p: CompiledPolicy): boolean => evaluatorsOf(p).traced() !== null;

/** Runs `f` with code generation from strings disabled, as a Content-Security-Policy would. */
export function withoutCodegen<T>(f: () => T): T {
  vi.stubGlobal('Function', function Function() {
    throw new EvalError('Code generation from strings disallowed for this context');
  });
  try {
    return f();
  } finally {
    vi.unstubAllGlobals();
  }
}

/** Compiles with code generation from strings disabled: the policy evaluates on the closures. */
export function compileWithoutCodegen(text: string): CompiledPolicy {
  return withoutCodegen(() => compile(text));
}

/** The case data and variants of it: every value removed, nulled or retyped in turn (bounded). */
export function variants(data: unknown): unknown[] {
  const out: unknown[] = [data, {}, null, [], 'text'];
  const walk = (node: unknown, replace: (v: unknown) => unknown, depth: number): void => {
    if (depth > 4 || typeof node !== 'object' || node === null) return;
    for (const key of Object.keys(node)) {
      const value = (node as Record<string, unknown>)[key];
      const rebuild = (v: unknown): unknown => {
        const copy: Record<string, unknown> | unknown[] = Array.isArray(node) ? [...node] : { ...node };
        if (v === undefined) delete (copy as Record<string, unknown>)[key];
        else (copy as Record<string, unknown>)[key] = v;
        return replace(copy);
      };
      for (const v of [undefined, null, 0, 'x', true, [], {}, ['x', 1]]) {
        if (out.length < 120) out.push(rebuild(v));
      }
      walk(value, rebuild, depth + 1);
    }
  };
  walk(data, (v) => v, 0);
  return out;
}

/** The very same result: same JSON text (so same key order) and deeply equal. */
export function same(a: EvaluationResult, b: EvaluationResult): void {
  expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  expect(a).toStrictEqual(b);
}
