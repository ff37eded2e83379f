/** Structured trace (LANGUAGE.md §10.3) → the `/run` string lines (§10.2). Built only when asked. */

import type { StructuredTrace, TraceCondition } from '../api-types.js';

const POSITIVE_WORDING: Record<string, string> = {
  'format check': 'has the format',
  pattern: 'matches pattern',
  period: 'is within',
};

function json(v: unknown): string {
  if (v === undefined) return 'null';
  try {
    return JSON.stringify(v);
  } catch {
    // Data nested deeper than JSON.stringify can recurse (JSON.parse accepts it): never fail the evaluation.
    return Array.isArray(v) ? '[…]' : typeof v === 'object' ? '{…}' : String(v);
  }
}

function operandText(c: Extract<TraceCondition, { type: 'comparison' }>): string {
  const v = c.value;
  if (v === null) return '';
  if (typeof v === 'object' && !Array.isArray(v) && 'path' in v) {
    const p = v as { path: string; actual: unknown };
    return ` ${p.path} (= ${json(p.actual)})`;
  }
  if (c.operator === 'period' || c.operator === 'is older than' || c.operator === 'is younger than') return ` ${String(v)}`;
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && c.operator !== 'format check' && c.operator !== 'pattern') {
    return ` ${v}`;
  }
  return ` ${json(v)}`;
}

function renderConditions(conditions: TraceCondition[], depth: number, out: string[]): void {
  const pad = '  '.repeat(depth);
  for (const c of conditions) {
    const kw = c.logical_op ?? 'if';
    switch (c.type) {
      case 'comparison': {
        const subject = `${c.measure ? `${c.measure} ` : ''}${c.path}`;
        if (c.error) out.push(`${pad}${kw} ${subject}: ${c.error}`);
        else if (c.skipped) out.push(`${pad}${kw} ${subject}: ${c.actual === null ? 'missing' : json(c.actual)} (if present) -> skipped, true`);
        else {
          const op = c.negated ? c.written : (POSITIVE_WORDING[c.operator] ?? c.operator);
          out.push(`${pad}${kw} ${subject} = ${json(c.actual)}: ${op}${operandText(c)} -> ${c.result}`);
        }
        break;
      }
      case 'rule_reference':
        out.push(`${pad}${kw} rule "${c.outcome}" -> ${c.result}`);
        break;
      case 'label_reference':
        out.push(`${pad}${kw} label $${c.label} -> ${c.result}`);
        break;
      case 'group':
        out.push(`${pad}${kw} group -> ${c.result}`);
        renderConditions(c.conditions, depth + 1, out);
        break;
      case 'quantifier': {
        if (c.error) {
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path}: ${c.error}`);
        } else if (c.skipped) {
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path}: missing (if present) -> skipped, true`);
        } else {
          const size = `${c.count} element${c.count === 1 ? '' : 's'}`;
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path} [${size}]: ${c.matched} matched -> ${c.result}`);
        }
        for (const el of c.elements) {
          out.push(`${pad}  [${el.index}] -> ${el.result}`);
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
  const goldenOutcome = meta[golden]!.outcome;
  for (const rule of tree.rules) {
    const tags: string[] = [];
    if (rule.label !== null) tags.push(`label ${rule.label}`);
    if (rule.outcome === goldenOutcome) tags.push('golden');
    else if (rule.label === null && rule.selector !== '') tags.push(`subject ${rule.selector}`);
    out.push(`rule "${rule.outcome}"${tags.length ? ` [${tags.join(', ')}]` : ''}`);
    renderConditions(rule.conditions, 1, out);
    if (!rule.error) out.push(`  => ${rule.outcome} = ${rule.result}`);
  }
  out.push(tree.error !== null ? `error: ${tree.error}` : `result: ${result}`);
  return out;
}
