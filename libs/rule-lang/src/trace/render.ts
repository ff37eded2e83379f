/**
 * Structured trace (LANGUAGE.md §10.3) → the `/run` string lines (§10.2), for evaluations that
 * ask for the structured trace (`traceTree`) or run on the closures. The generated traced
 * evaluator (compile/codegen-trace.ts) writes the very same lines directly; text.ts holds the
 * wording both use.
 */

import type { StructuredTrace, TraceCondition } from '../api-types.js';
import { arrow, elementLine, json, measurePrefix, operatorText, padOf, quantifierSummary, ruleHeader, valueOperandText } from './text.js';

function operandText(c: Extract<TraceCondition, { type: 'comparison' }>): string {
  const v = c.value;
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && 'path' in v) {
    const p = v as { path: string; actual: unknown };
    return ` ${p.path} (= ${json(p.actual)})`;
  }
  return valueOperandText(c.operator, v, listJson);
}

/** JSON text of a literal list, by array identity; `items` is a copy that proves the array unchanged since. */
const LIST_JSON = new WeakMap<readonly unknown[], { items: readonly unknown[]; text: string }>();

const isPrimitive = (x: unknown): boolean => x === null || (typeof x !== 'object' && typeof x !== 'function');

/**
 * `json(list)`, cached: a comparison's list operand (`is in [...]`) is the same array in every
 * trace of a policy, and stringifying it was a third of the rendering. The cache is only used
 * while the array still holds the same primitives (a caller may have mutated a returned
 * traceTree) and has no `toJSON`, so the text is always what JSON.stringify would print.
 */
function listJson(v: readonly unknown[]): string {
  const plain = (v as { toJSON?: unknown }).toJSON === undefined;
  const hit = plain ? LIST_JSON.get(v) : undefined;
  if (hit !== undefined && sameItems(hit.items, v)) return hit.text;
  const text = json(v);
  if (plain && allPrimitive(v)) LIST_JSON.set(v, { items: v.slice(), text });
  return text;
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

function allPrimitive(a: readonly unknown[]): boolean {
  for (let i = 0; i < a.length; i++) if (!isPrimitive(a[i])) return false;
  return true;
}

function renderConditions(conditions: TraceCondition[], depth: number, out: string[]): void {
  const pad = padOf(depth);
  for (const c of conditions) {
    const kw = c.logical_op ?? 'if';
    switch (c.type) {
      case 'comparison': {
        const subject = `${measurePrefix(c.measure)}${c.path}`;
        if (c.error) out.push(`${pad}${kw} ${subject}: ${c.error}`);
        else if (c.skipped)
          out.push(`${pad}${kw} ${subject}: ${c.actual === null ? 'missing' : json(c.actual)} (if present) -> skipped, true`);
        else {
          const op = operatorText(c.operator, c.written, c.negated);
          out.push(`${pad}${kw} ${subject} = ${json(c.actual)}: ${op}${operandText(c)}${arrow(c.result)}`);
        }
        break;
      }
      case 'rule_reference':
        out.push(`${pad}${kw} rule "${c.outcome}"${arrow(c.result)}`);
        break;
      case 'label_reference':
        out.push(`${pad}${kw} label $${c.label}${arrow(c.result)}`);
        break;
      case 'group':
        out.push(`${pad}${kw} group${arrow(c.result)}`);
        renderConditions(c.conditions, depth + 1, out);
        break;
      case 'quantifier': {
        if (c.error) {
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path}: ${c.error}`);
        } else if (c.skipped) {
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path}: missing (if present) -> skipped, true`);
        } else {
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path}${quantifierSummary(c.count, c.matched, c.result)}`);
        }
        for (const el of c.elements) {
          out.push(elementLine(depth, el.index, el.result));
          renderConditions(el.conditions, depth + 2, out);
        }
        break;
      }
    }
  }
}

/** Renders the structured trace as lines; the last line is `result: …` or `error: …`. */
export function renderTrace(
  tree: StructuredTrace,
  result: boolean,
  golden: number,
  meta: readonly { outcome: string; label: string | null }[],
): string[] {
  const out: string[] = [];
  const goldenOutcome = meta[golden].outcome;
  for (const rule of tree.rules) {
    out.push(ruleHeader(rule.outcome, rule.label, rule.selector, rule.outcome === goldenOutcome));
    renderConditions(rule.conditions, 1, out);
    if (!rule.error) out.push(`  => ${rule.outcome} = ${rule.result}`);
  }
  out.push(tree.error !== null ? `error: ${tree.error}` : `result: ${result}`);
  return out;
}
